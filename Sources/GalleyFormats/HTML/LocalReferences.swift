import Foundation
import GalleyCore

/// A reference from a body's HTML to a file beside it: `<img src="chart.png">`,
/// `<source src>`, `<video poster>`, `<audio src>`, `<a href="report.pdf">`.
public struct LocalReference: Sendable, Hashable {
    /// The element, lowercased: `img`, `source`, `video`, `audio`, `track` or `a`.
    public var element: String
    /// The attribute, lowercased: `src`, `poster` or `href`.
    public var attribute: String
    /// The path as written, with character references and percent escapes decoded and without
    /// its `?query` or `#fragment`: what names the file.
    public var path: String
    /// The `?query` and `#fragment` as written, kept when the value is rewritten.
    public var suffix: String
    /// The attribute's value exactly as written.
    public var written: String
    /// UTF-8 offsets of the value (inside its quotes) and of the whole start tag.
    public var valueRange: Range<Int>
    public var tagRange: Range<Int>
    /// The element's `alt` and `title` attributes, decoded (empty when absent).
    public var alt: String
    public var title: String
    /// 1-based line and column (in characters) of the value in the scanned text.
    public var line: Int
    public var column: Int

    /// An `<img>`: pack turns it into an asset of the article (a placeholder in the body).
    public var isImage: Bool { element == "img" && attribute == "src" }
}

/// Finds local file references in HTML and rewrites them.
///
/// Written by hand because no parser at hand says where an attribute's value is: libxml2's
/// HTML parser gives lines only, and serialising its tree would rewrite the whole body (and,
/// at 2.9, mangle HTML5). This is a tokenizer of start tags only (comments, declarations, end
/// tags and the text of `<script>`/`<style>` skipped), which is all a rewrite of attribute
/// values needs; `HTMLInspector` still judges the markup.
public enum LocalReferences {
    /// The attributes that name a file, by element.
    static let attributes: [String: Set<String>] = [
        "img": ["src"], "source": ["src"], "video": ["src", "poster"], "audio": ["src"], "track": ["src"], "a": ["href"],
    ]

    /// Whether an attribute value names a file relative to the body: not a URL with a scheme
    /// (`https:`, `mailto:`, `data:`, read as browsers and the other checks read it,
    /// `URLScheme`), not protocol-relative, absolute, a query or a fragment. A one-letter
    /// "scheme" is a drive path (`C:/x.png`): local, for the source checks to refuse.
    public static func isLocal(_ value: String) -> Bool {
        let trimmed = value.trimmingWhitespacesAndNewlines()
        guard let first = trimmed.unicodeScalars.first, !"#/?\\".unicodeScalars.contains(first) else { return false }
        guard let scheme = URLScheme.of(trimmed) else { return true }
        return scheme.count == 1
    }

    /// Every local reference in `html`, in document order.
    public static func scan(_ html: String) -> [LocalReference] {
        var found: [LocalReference] = []
        Tags.each(in: Array(html.utf8)) { tag in
            guard let wanted = attributes[tag.name] else { return }
            for attribute in tag.attributes where wanted.contains(attribute.name) {
                let written = attribute.value
                guard isLocal(written) else { continue }
                let trimmed = written.trimmingWhitespacesAndNewlines()
                let cut = trimmed.firstIndex { $0 == "?" || $0 == "#" } ?? trimmed.endIndex
                let rawPath = String(trimmed[..<cut])
                found.append(LocalReference(
                    element: tag.name, attribute: attribute.name, path: rawPath.removingPercentEncoding ?? rawPath,
                    suffix: String(trimmed[cut...]), written: written, valueRange: attribute.valueRange,
                    tagRange: tag.range, alt: tag.attributes.first { $0.name == "alt" }?.value ?? "",
                    title: tag.attributes.first { $0.name == "title" }?.value ?? "", line: 0, column: 0))
            }
        }
        locate(&found, in: html)
        return found
    }

    /// `html` with every local reference's value replaced by `relocate(path)` (then its suffix),
    /// attribute-escaped; a reference for which it returns `nil` is left as written.
    public static func relocating(_ html: String, _ relocate: (LocalReference) -> String?) -> String {
        let edits = scan(html).compactMap { reference -> (range: Range<Int>, with: String)? in
            guard let url = relocate(reference) else { return nil }
            return (reference.valueRange, HTMLText.attribute(url + reference.suffix))
        }
        return html.replacingUTF8Ranges(edits)
    }

    /// Fills in each reference's line and column, in one pass over the text.
    private static func locate(_ references: inout [LocalReference], in html: String) {
        guard !references.isEmpty else { return }
        let bytes = Array(html.utf8)
        var line = 1
        var lineStart = 0
        var position = 0
        for index in references.indices {
            let target = references[index].valueRange.lowerBound
            while position < target {
                if bytes[position] == 10 {
                    line += 1
                    lineStart = position + 1
                }
                position += 1
            }
            references[index].line = line
            references[index].column = String(decoding: bytes[lineStart..<target], as: UTF8.self).count + 1
        }
    }
}

/// Start tags and their attributes, with the byte ranges a rewrite needs.
enum Tags {
    struct Attribute {
        var name: String
        /// Decoded (character references resolved).
        var value: String
        var valueRange: Range<Int>
    }

    struct Tag {
        var name: String
        var attributes: [Attribute]
        var range: Range<Int>
    }

    static func each(in bytes: [UInt8], _ body: (Tag) -> Void) {
        let n = bytes.count
        var i = 0
        func isSpace(_ b: UInt8) -> Bool { b == 32 || b == 9 || b == 10 || b == 13 || b == 12 }
        func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= 97 && (b | 0x20) <= 122 }
        func skip(past pattern: [UInt8], from start: Int, caseInsensitive: Bool = false) -> Int {
            var j = start
            while j + pattern.count <= n {
                var matched = true
                for k in 0..<pattern.count {
                    let b = caseInsensitive ? bytes[j + k] | (isLetter(bytes[j + k]) ? 0x20 : 0) : bytes[j + k]
                    if b != pattern[k] { matched = false; break }
                }
                if matched { return j + pattern.count }
                j += 1
            }
            return n
        }
        while i < n {
            guard bytes[i] == 60, i + 1 < n else { i += 1; continue }  // <
            let next = bytes[i + 1]
            if next == 33 {  // <!
                i = i + 3 < n && bytes[i + 2] == 45 && bytes[i + 3] == 45
                    ? skip(past: Array("-->".utf8), from: i + 4) : skip(past: [62], from: i + 2)
                continue
            }
            if next == 63 || next == 47 {  // <? or </
                i = skip(past: [62], from: i + 2)
                continue
            }
            guard isLetter(next) else { i += 1; continue }
            let start = i
            var j = i + 1
            while j < n, !isSpace(bytes[j]), bytes[j] != 62, bytes[j] != 47 { j += 1 }
            let name = String(decoding: bytes[(i + 1)..<j], as: UTF8.self).lowercased()
            var attributes: [Attribute] = []
            while j < n {
                while j < n, isSpace(bytes[j]) || bytes[j] == 47 { j += 1 }
                guard j < n, bytes[j] != 62 else { break }
                let nameStart = j
                while j < n, !isSpace(bytes[j]), bytes[j] != 62, bytes[j] != 61, !(bytes[j] == 47 && j > nameStart) { j += 1 }
                if j == nameStart { j += 1; continue }
                let attributeName = String(decoding: bytes[nameStart..<j], as: UTF8.self).lowercased()
                var k = j
                while k < n, isSpace(bytes[k]) { k += 1 }
                guard k < n, bytes[k] == 61 else {  // no value
                    attributes.append(Attribute(name: attributeName, value: "", valueRange: j..<j))
                    continue
                }
                k += 1
                while k < n, isSpace(bytes[k]) { k += 1 }
                let valueRange: Range<Int>
                if k < n, bytes[k] == 34 || bytes[k] == 39 {
                    let quote = bytes[k]
                    var end = k + 1
                    while end < n, bytes[end] != quote { end += 1 }
                    valueRange = (k + 1)..<end
                    j = min(end + 1, n)
                } else {
                    var end = k
                    while end < n, !isSpace(bytes[end]), bytes[end] != 62 { end += 1 }
                    valueRange = k..<end
                    j = end
                }
                let raw = String(decoding: bytes[valueRange], as: UTF8.self)
                attributes.append(Attribute(name: attributeName, value: HTMLText.decodeReferences(raw), valueRange: valueRange))
            }
            let end = min(j + 1, n)
            body(Tag(name: name, attributes: attributes, range: start..<end))
            i = end
            if name == "script" || name == "style" {
                i = skip(past: Array("</\(name)".utf8), from: i, caseInsensitive: true)
            }
        }
    }
}
