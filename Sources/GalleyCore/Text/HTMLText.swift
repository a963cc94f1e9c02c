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
