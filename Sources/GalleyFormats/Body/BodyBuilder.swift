import Foundation
import GalleyCore

/// Turns an article's source body into the HTML `body` of `latest.json`:
/// placeholders checked and rewritten from local keys to global ids, Markdown converted,
/// line endings LF, every placeholder alone on its line, and Dumpling's UTF-16 search window
/// (wire format §3.1) kept wide enough to reach the last placeholder.
public struct BodyBuilder: Sendable {
    package let markdown = CommonMark()

    public init() {}

    /// Registers cmark-gfm's extensions; call once before converting on several threads.
    public func prepare() { _ = markdown.html(fromMarkdown: "") }

    /// - Parameters:
    ///   - text: the body as written (front matter already removed).
    ///   - file: the body file's display path, for diagnostics.
    ///   - lineOffset: lines of the file before `text`.
    ///   - ids: local asset key → global id.
    public func build(
        _ text: String, format: BodyFormat, file: String, lineOffset: Int, ids: [String: String]
    ) -> (body: String, diagnostics: [Diagnostic]) {
        build(prepare(text, format: format, file: file, lineOffset: lineOffset), ids: ids)
    }

    /// Converts the body to HTML (placeholders still naming local keys) and finds its local
    /// file references, each located in the file as written: what packing needs to know
    /// before it plans the article's assets.
    public func prepare(_ text: String, format: BodyFormat, file: String, lineOffset: Int) -> PreparedBody {
        let source = LineEndings.normalize(text)
        let html = format == .markdown ? markdown.html(fromMarkdown: source) : source
        var references: [PreparedBody.Reference] = []
        // In Markdown the HTML is cmark's: find each value in the text as written, in order.
        let sourceBytes = Array(source.utf8)
        var cursor = 0
        for reference in LocalReferences.scan(html) {
            var location = SourceLocation(path: file, line: lineOffset + reference.line, column: reference.column)
            if format == .markdown {
                let candidates = [reference.written, reference.path].map { Array($0.utf8) }
                let found = candidates.lazy.compactMap { Self.find($0, in: sourceBytes, from: cursor) ?? Self.find($0, in: sourceBytes, from: 0) }.first
                if let found {
                    cursor = found
                    let (line, column) = Self.lineAndColumn(of: found, in: sourceBytes)
                    location = SourceLocation(path: file, line: lineOffset + line, column: column)
                } else {
                    location = SourceLocation(path: file, line: lineOffset + 1)
                }
            }
            references.append(PreparedBody.Reference(reference: reference, location: location))
        }
        return PreparedBody(source: source, html: html, file: file, lineOffset: lineOffset, references: references)
    }

    /// The finished body: placeholders checked against `ids` (local key → global id) and
    /// rewritten, and each local reference rewritten as `links` says (keyed by the reference's
    /// path): an `<img>` whose target is an asset becomes that asset's placeholder, any other
    /// reference names the file as packed.
    public func build(
        _ prepared: PreparedBody, ids: [String: String], links: [String: PreparedBody.Target] = [:]
    ) -> (body: String, diagnostics: [Diagnostic]) {
        var diagnostics: [Diagnostic] = []
        var sortedKeys: [String]?  // sorted once, at the first unknown placeholder
        for match in Placeholder.scan(prepared.source) {
            let location = SourceLocation(path: prepared.file, line: prepared.lineOffset + match.line, column: match.column)
            if ids[match.key] == nil {
                let known = sortedKeys ?? ids.keys.sorted()
                sortedKeys = known
                var hint = known.isEmpty
                    ? "This article lists no assets: add the file under `assets:` in its fields."
                    : "Known keys: \(known.prefix(8).map { "`\($0)`" }.joined(separator: ", "))."
                if let near = nearest(to: match.key, among: known, within: max(2, match.key.count / 3)) {
                    hint = "Did you mean `\(near)`?"
                }
                diagnostics.append(Diagnostic(
                    .bodyPlaceholderUnknown, "the placeholder names `\(match.key)`, which is not an asset of this article",
                    at: location, hint: hint))
            } else if !match.isExact {
                diagnostics.append(Diagnostic(
                    .bodyPlaceholderMalformed,
                    "the placeholder `\(match.text)` is not spelled the way Dumpling reads it",
                    at: location, hint: "Write it exactly as `\(Placeholder.text(for: match.key))`."))
            }
        }
        var edits: [(range: Range<Int>, with: String)] = Placeholder.scan(prepared.html).compactMap { match in
            ids[match.key].map { (match.utf8Range, Placeholder.text(for: $0)) }
        }
        for item in prepared.references {
            let reference = item.reference
            guard let target = links[reference.path] else { continue }
            if reference.isImage, let id = target.assetID {
                edits.append((reference.tagRange, Placeholder.text(for: id)))
            } else {
                edits.append((reference.valueRange, HTMLText.attribute(HTMLText.urlPath(target.name) + reference.suffix)))
            }
        }
        return (Self.finish(prepared.html.replacingUTF8Ranges(edits)), diagnostics)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, needle.count <= haystack.count, start <= haystack.count - needle.count else { return nil }
        var i = start
        while i <= haystack.count - needle.count {
            if haystack[i] == first && haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    private static func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (Int, Int) {
        var line = 1
        var lineStart = 0
        for i in 0..<offset where bytes[i] == 10 {
            line += 1
            lineStart = i + 1
        }
        return (line, String(decoding: bytes[lineStart..<offset], as: UTF8.self).count + 1)
    }

    /// How many more UTF-16 units than characters `text` has. An ASCII text without a
    /// carriage return has none, which is answered without counting characters (grapheme
    /// breaking, 1.4% of packing 30,000 articles when asked of every body).
    static func utf16Surplus(_ text: String) -> Int {
        var text = text
        let units = text.utf16.count
        let plain = text.withUTF8 { bytes in
            units == bytes.count && (bytes.baseAddress.map { memchr($0, 13, bytes.count) == nil } ?? true)
        }
        return plain ? 0 : units - text.count
    }

    /// Puts every exact placeholder alone on its line, then pads for Dumpling's search window.
    public static func finish(_ html: String) -> String {
        let matches = Placeholder.scan(html).filter(\.isExact)
        guard !matches.isEmpty else { return html }
        let bytes = Array(html.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + matches.count * 2 + 16)
        var position = 0
        for match in matches {
            var segment = Array(bytes[position..<match.utf8Range.lowerBound])
            while let last = segment.last, last == 32 || last == 9 { segment.removeLast() }
            out.append(contentsOf: segment)
            if let last = out.last, last != 10 { out.append(10) }
            out.append(contentsOf: bytes[match.utf8Range])
            position = match.utf8Range.upperBound
            while position < bytes.count, bytes[position] == 32 || bytes[position] == 9 { position += 1 }
            if position < bytes.count, bytes[position] != 10 { out.append(10) }
        }
        out.append(contentsOf: bytes[position...])
        var body = String(decoding: out, as: UTF8.self)
        // Dumpling searches the first `characters.count` UTF-16 units only: pad so the window
        // still reaches the end (modern grapheme counts are never larger than Swift 1.2's).
        let shortfall = Self.utf16Surplus(body)
        if shortfall > 0 {
            body += String(repeating: " ", count: shortfall) + "\n"
        }
        return body
    }
}

/// A body converted to HTML, with its local file references found: the first half of
/// `BodyBuilder.build`, done before the article's assets are planned.
public struct PreparedBody: Sendable {
    /// A local reference and where it is written in the body file.
    public struct Reference: Sendable {
        public var reference: LocalReference
        public var location: SourceLocation
    }

    /// What a local reference becomes in the zip.
    public struct Target: Sendable, Hashable {
        /// The file's name in the zip.
        public var name: String
        /// The asset an `<img>` becomes, when it becomes one.
        public var assetID: String?

        public init(name: String, assetID: String? = nil) {
            self.name = name
            self.assetID = assetID
        }
    }

    /// The text as written, LF line endings.
    public var source: String
    /// The HTML (Markdown converted), placeholders still naming local keys.
    public var html: String
    public var file: String
    public var lineOffset: Int
    public var references: [Reference]
}
