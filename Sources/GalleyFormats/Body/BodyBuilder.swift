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
        var diagnostics: [Diagnostic] = []
        let source = LineEndings.normalize(text)
        let matches = Placeholder.scan(source)
        for match in matches {
            let location = SourceLocation(path: file, line: lineOffset + match.line, column: match.column)
            if ids[match.key] == nil {
                let known = ids.keys.sorted()
                var hint = known.isEmpty
                    ? "This article lists no assets: add the file under `assets:` in its fields."
                    : "Known keys: \(known.prefix(8).map { "`\($0)`" }.joined(separator: ", "))."
                if let near = known.min(by: { editDistance($0, match.key) < editDistance($1, match.key) }),
                   editDistance(near, match.key) <= max(2, match.key.count / 3) {
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
        let rewritten = Placeholder.replace(in: source, matches) { match in
            ids[match.key].map(Placeholder.text(for:))
        }
        let html = format == .markdown ? markdown.html(fromMarkdown: rewritten) : rewritten
        return (Self.finish(html), diagnostics)
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
        let shortfall = body.utf16.count - body.count
        if shortfall > 0 {
            body += String(repeating: " ", count: shortfall) + "\n"
        }
        return body
    }
}
