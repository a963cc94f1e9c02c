/// Escaping for HTML that Galley writes itself (publisher bodies are inserted as they are).
public enum HTMLText {
    /// Text content: `&`, `<`, `>`.
    public static func text(_ value: String) -> String { escape(value, quotes: false) }

    /// An attribute value, safe in double or single quotes.
    public static func attribute(_ value: String) -> String { escape(value, quotes: true) }

    private static func escape(_ value: String, quotes: Bool) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for c in value.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quotes: out += "&quot;"
            case "'" where quotes: out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// The named references decoded: those a URL, a caption or a body's text plausibly holds.
    static let named: [Substring: Unicode.Scalar] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "rsquo": "\u{2019}",
        "lsquo": "\u{2018}", "rdquo": "\u{201D}", "ldquo": "\u{201C}", "mdash": "\u{2014}", "ndash": "\u{2013}",
        "hellip": "\u{2026}", "shy": "\u{00AD}",
    ]

    /// The character reference (`&name;`, `&#123;` or `&#x7B;`) at the start of `rest`, which
    /// follows an `&`: its scalar and what comes after; nil when it is none (the `&` is then
    /// text). The one decoder of references: search's index text and local file references.
    package static func characterReference(
        _ rest: Substring.UnicodeScalarView
    ) -> (Unicode.Scalar, Substring.UnicodeScalarView)? {
        guard let end = rest.prefix(12).firstIndex(of: ";") else { return nil }
        let name = Substring(rest[rest.startIndex..<end])
        let after = rest[rest.index(after: end)...]
        if name.hasPrefix("#") {
            let digits = name.dropFirst()
            let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
            guard let value, let scalar = Unicode.Scalar(value) else { return nil }
            return (scalar, after)
        }
        guard let scalar = named[name] else { return nil }
        return (scalar, after)
    }

    /// An attribute value as a browser reads it, its character references decoded; anything
    /// that is not one is kept as written.
    public static func decodeReferences(_ value: String) -> String {
        guard value.utf8.contains(UInt8(ascii: "&")) else { return value }
        var out = String.UnicodeScalarView()
        var scalars = value.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            if scalar == "&", let (decoded, rest) = characterReference(scalars) {
                out.append(decoded)
                scalars = rest
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// A relative path made URL-safe: each segment percent-encoded (RFC 3986 `pchar`), `/` kept.
    public static func urlPath(_ path: String) -> String {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&()*+,;=:@/".utf8)
        var out = ""
        for byte in path.utf8 {
            if allowed.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }
}
