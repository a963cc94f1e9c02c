import Foundation
import GalleyCore

/// Asset placeholders in bodies: `<!-- [ASSET: id] -->` (wire format §3).
public enum Placeholder {
    public static let prefix = "<!-- [ASSET: "
    public static let suffix = "] -->"

    public static func text(for id: String) -> String { prefix + id + suffix }

    /// A placeholder-like comment found in a text.
    public struct Match: Sendable, Hashable {
        /// The id or key inside the brackets, trimmed.
        public var key: String
        /// The matched text.
        public var text: String
        /// Whether it is spelled exactly as Dumpling needs (`<!-- [ASSET: key] -->`).
        public var isExact: Bool
        /// 1-based line and column (in characters) of its start.
        public var line: Int
        public var column: Int
        /// UTF-8 offsets of the match in the text.
        public var utf8Range: Range<Int>
    }

    /// Finds every comment that looks like a placeholder: `<!--`, optional space, `[`, `asset`
    /// in any case, `:`, the key, `]`, optional space, `-->`. Runs in one pass over the bytes.
    public static func scan(_ text: String) -> [Match] {
        let bytes = Array(text.utf8)
        var matches: [Match] = []
        var line = 1
        var lineStart = 0
        var i = 0
        let n = bytes.count
        func skipSpaces(_ j: inout Int) { while j < n, bytes[j] == 32 || bytes[j] == 9 { j += 1 } }
        while i < n {
            let byte = bytes[i]
            if byte == 10 {
                line += 1
                lineStart = i + 1
                i += 1
                continue
            }
            guard byte == 60, i + 3 < n, bytes[i + 1] == 33, bytes[i + 2] == 45, bytes[i + 3] == 45 else {
                i += 1
                continue
            }
            // `<!--` at i.
            var j = i + 4
            skipSpaces(&j)
            guard j < n, bytes[j] == 91 else { i += 4; continue }  // [
            j += 1
            skipSpaces(&j)
            guard j + 5 <= n, String(decoding: bytes[j..<j + 5], as: UTF8.self).lowercased() == "asset" else {
                i += 4
                continue
            }
            j += 5
            skipSpaces(&j)
            guard j < n, bytes[j] == 58 else { i += 4; continue }  // :
            j += 1
            let keyStart = j
            while j < n, bytes[j] != 93, bytes[j] != 10 { j += 1 }  // up to ]
            guard j < n, bytes[j] == 93 else { i += 4; continue }
            let keyEnd = j
            j += 1
            skipSpaces(&j)
            guard j + 3 <= n, bytes[j] == 45, bytes[j + 1] == 45, bytes[j + 2] == 62 else { i += 4; continue }
            j += 3
            let matchText = String(decoding: bytes[i..<j], as: UTF8.self)
            let key = String(decoding: bytes[keyStart..<keyEnd], as: UTF8.self).trimmingWhitespaces()
            let column = String(decoding: bytes[lineStart..<i], as: UTF8.self).count + 1
            matches.append(Match(
                key: key, text: matchText, isExact: matchText == Placeholder.text(for: key), line: line, column: column,
                utf8Range: i..<j))
            i = j
        }
        return matches
    }

    /// Replaces each match with `replacement(match)` (or leaves it when that returns `nil`).
    public static func replace(in text: String, _ matches: [Match], _ replacement: (Match) -> String?) -> String {
        text.replacingUTF8Ranges(matches.compactMap { match in replacement(match).map { (match.utf8Range, $0) } })
    }
}
