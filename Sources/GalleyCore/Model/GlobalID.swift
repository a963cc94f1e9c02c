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
        if id.count > 128 { return "is longer than 128 characters" }
        for scalar in id.unicodeScalars {
            switch scalar {
            case "'", "%", "\\", "\"":
                return "contains `\(scalar)`, which breaks Dumpling's queries"
            default:
                if scalar.properties.isWhitespace || scalar.value < 0x20 || scalar.value == 0x7F {
                    return "contains white space or a control character"
                }
            }
        }
        return nil
    }
}
