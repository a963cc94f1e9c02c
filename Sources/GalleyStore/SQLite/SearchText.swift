import GRDB

/// The text the search index holds, and how it is split into words: one place, used when
/// importing, when migrating an older index and when reading a query, so that all three agree.
///
/// SQLite's `unicode61` tokenizer does the splitting (folding case and, with
/// `remove_diacritics 2`, every Latin diacritic: "cafe" finds "café"). It would also split
/// "Queequeg's" into "queequeg" and "s", and "s" prefixes half the language; so apostrophes are
/// token characters, and this normalisation first decides which apostrophes are inside a word
/// (kept, as `'`) and which are quotation marks (made `’`, a separator). Hand-written because it
/// is a single pass over the scalars that also strips tags, decodes entities and folds
/// whitespace (so snippets never hold raw newlines); no library does that combination.
enum SearchText {
    static let tokenizer = FTS5TokenizerDescriptor.unicode61(diacritics: .remove, tokenCharacters: ["'"])

    /// The snippet markers: private-use characters that normalised text never holds.
    static let open: Unicode.Scalar = "\u{E000}"
    static let close: Unicode.Scalar = "\u{E001}"

    /// A field as the index holds it (title, dek, keywords, a query): apostrophes decided,
    /// one scalar for one scalar, so offsets into it are offsets into the original.
    static func field(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        out.reserveCapacity(scalars.count)
        for index in scalars.indices {
            out.append(normalised(scalars, index))
        }
        return String(out)
    }

    /// An HTML body as the index holds it: tags and comments out (each a word break), entities
    /// decoded, runs of whitespace one space, apostrophes decided.
    static func body(_ html: String) -> String {
        var text = String.UnicodeScalarView()
        var scalars = html.unicodeScalars[...]
        var pendingSpace = false
        func emit(_ scalar: Unicode.Scalar) {
            if scalar.properties.isWhitespace || scalar == open || scalar == close {
                pendingSpace = !text.isEmpty
                return
            }
            if pendingSpace { text.append(" ") }
            pendingSpace = false
            text.append(scalar)
        }
        while let scalar = scalars.popFirst() {
            switch scalar {
            case "<":
                // A tag or a comment: skip to its end; it separates words.
                if let end = scalars.firstIndex(of: ">") { scalars = scalars[scalars.index(after: end)...] } else { scalars = scalars[scalars.endIndex...] }
                pendingSpace = !text.isEmpty
            case "&":
                if let (decoded, rest) = entity(scalars) {
                    emit(decoded)
                    scalars = rest
                } else {
                    emit(scalar)
                }
            default:
                emit(scalar)
            }
        }
        return field(String(text))
    }

    /// A quotation mark or an apostrophe inside a word (`'` between two letters or digits).
    private static func normalised(_ scalars: [Unicode.Scalar], _ index: Int) -> Unicode.Scalar {
        let scalar = scalars[index]
        guard scalar == "'" || scalar == "\u{2019}" || scalar == "\u{02BC}" else { return scalar }
        let inWord = index > 0 && index + 1 < scalars.count
            && isWordScalar(scalars[index - 1]) && isWordScalar(scalars[index + 1])
        return inWord ? "'" : "\u{2019}"
    }

    private static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil
    }

    private static let named: [Substring: Unicode.Scalar] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "rsquo": "\u{2019}",
        "lsquo": "\u{2018}", "rdquo": "\u{201D}", "ldquo": "\u{201C}", "mdash": "\u{2014}", "ndash": "\u{2013}",
        "hellip": "\u{2026}", "shy": "\u{00AD}",
    ]

    /// `&name;`, `&#123;` or `&#x7B;` at the start of `rest` (after the `&`): the scalar and
    /// what follows; nil when it is none of them (the `&` is then text).
    private static func entity(_ rest: Substring.UnicodeScalarView) -> (Unicode.Scalar, Substring.UnicodeScalarView)? {
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

    /// A snippet or highlight as FTS5 marked it: the text without markers, and each marked
    /// range as an offset and a length in Unicode scalars.
    static func unmark(_ marked: String) -> (text: String, ranges: [(start: Int, length: Int)]) {
        var text = String.UnicodeScalarView()
        var ranges: [(start: Int, length: Int)] = []
        var count = 0
        var start: Int?
        for scalar in marked.unicodeScalars {
            if scalar == open {
                start = count
            } else if scalar == close {
                if let begun = start, count > begun { ranges.append((begun, count - begun)) }
                start = nil
            } else {
                text.append(scalar)
                count += 1
            }
        }
        return (String(text), ranges)
    }
}
