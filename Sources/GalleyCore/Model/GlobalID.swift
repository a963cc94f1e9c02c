/// Galley's global ids: 24 lowercase hex digits, like the Mongo-style ids Dumpling apps know.
///
/// A derived id depends only on the issue's `apple_id` and the stable path of the thing inside
/// the issue (the article's slug, the asset's key), so packing an edited issue again gives every
/// article and asset the id it had, and a later import updates it in place.
public enum GlobalID {
    public static func issue(appleID: String) -> String {
        derive(appleID, "issue", "")
    }

    public static func article(appleID: String, slug: String) -> String {
        derive(appleID, "article", slug)
    }

    /// `owner` is the article slug, or the empty string for the issue's own images.
    public static func asset(appleID: String, owner: String, key: String) -> String {
        derive(appleID, "asset", owner + "/" + key)
    }

    package static func derive(_ appleID: String, _ kind: String, _ path: String) -> String {
        let digest = SHA256Hasher.hex(of: "galley-id-v1\u{0}\(appleID)\u{0}\(kind)\u{0}\(path)")
        return String(digest.prefix(24))
    }

    /// Whether `id` is safe to hand to Dumpling: non-empty, at most 128 characters, and free of
    /// the characters that break its query strings (`'`, `%`, `\`, `"`), white space and controls.
    public static func problem(with id: String) -> String? {
        if id.isEmpty { return "is empty" }
        // Characters are counted only when the bytes could be too many: every id of a 30,000-
        // article issue passes here, and counting means finding each grapheme's end.
        if id.utf8.count > 128 && id.count > 128 { return "is longer than 128 characters" }
        for scalar in id.unicodeScalars {
            switch scalar {
            case "'", "%", "\\", "\"":
                return "contains `\(scalar)`, which breaks Dumpling's queries"
            default:
                if scalar.isWhiteSpace || scalar.value < 0x20 || scalar.value == 0x7F {
                    return "contains white space or a control character"
                }
            }
        }
        return nil
    }
}

extension GlobalID {
    /// An id as a key of the tables that hold every id of an issue (90,000 at 30,000
    /// articles): Galley's own ids (24 lowercase hex digits) as their 12 bytes, inline, instead
    /// of a string on the heap each; any other id as its string. Two keys are equal exactly
    /// when their ids are.
    package enum Key: Hashable, Comparable, Sendable {
        case hex(UInt64, UInt32)
        case text(String)

        package init(_ id: String) {
            let utf8 = id.utf8
            guard utf8.count == 24 else {
                self = .text(id)
                return
            }
            var high: UInt64 = 0
            var low: UInt32 = 0
            for (i, byte) in utf8.enumerated() {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                default:
                    self = .text(id)
                    return
                }
                if i < 16 { high = high << 4 | UInt64(digit) } else { low = low << 4 | UInt32(digit) }
            }
            self = .hex(high, low)
        }

        /// The id.
        package var text: String {
            switch self {
            case .text(let text): return text
            case .hex(let high, let low): return hexString(high.bigEndianBytes + low.bigEndianBytes)
            }
        }
    }
}
