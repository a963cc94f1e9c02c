import Foundation

extension StringProtocol where UTF8View: BidirectionalCollection, UTF8View.Index == String.Index {
    /// `trimmingCharacters(in: .whitespaces)`. ASCII spaces and tabs are trimmed here, byte by
    /// byte; only a text that then begins or ends with a non-ASCII byte (Unicode has more
    /// spaces) goes to Foundation, whose version bridges through `NSString`: 3% of
    /// `galley validate` at 30,000 articles, and 1.8% of pack, where every placeholder's key
    /// (`<!-- [ASSET: key] -->`) begins with a space.
    package func trimmingWhitespaces() -> String { trimmed(newlines: false) }

    /// `trimmingCharacters(in: .whitespacesAndNewlines)`, the same way.
    package func trimmingWhitespacesAndNewlines() -> String { trimmed(newlines: true) }

    private func trimmed(newlines: Bool) -> String {
        let bytes = utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start].isASCIIBlank(newlines: newlines) { start = bytes.index(after: start) }
        while start < end, bytes[bytes.index(before: end)].isASCIIBlank(newlines: newlines) { end = bytes.index(before: end) }
        // Trimming what is left the way Foundation does gives what it gives on the whole text:
        // ASCII blanks are in both sets, and trimming stops at the first character outside them.
        guard start < end, bytes[start] < 0x80, bytes[bytes.index(before: end)] < 0x80 else {
            let rest = self[start..<end]
            return newlines ? rest.trimmingCharacters(in: .whitespacesAndNewlines) : rest.trimmingCharacters(in: .whitespaces)
        }
        return String(self[start..<end])
    }
}

extension UInt8 {
    /// ASCII blanks: space and tab, and with `newlines` LF, VT, FF and CR (with them, ASCII's
    /// part of Unicode's White_Space).
    package func isASCIIBlank(newlines: Bool) -> Bool {
        self == 0x20 || self == 0x09 || (newlines && (0x0A...0x0D).contains(self))
    }
}

extension Unicode.Scalar {
    /// Unicode's White_Space, answered without its tables for ASCII: the tables were 6% of the
    /// thread that checks an issue's ids and a tenth of building its search text, at every scalar.
    package var isWhiteSpace: Bool {
        isASCII ? UInt8(value).isASCIIBlank(newlines: true) : properties.isWhitespace
    }
}
