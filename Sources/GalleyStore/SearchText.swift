import GalleyCore

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
package enum SearchText {
    /// The snippet markers: private-use characters that normalised text never holds.
    package static let open: Unicode.Scalar = "\u{E000}"
    package static let close: Unicode.Scalar = "\u{E001}"

    /// A field as the index holds it (title, dek, keywords, a query): apostrophes decided,
    /// one scalar for one scalar, so offsets into it are offsets into the original.
    package static func field(_ text: String) -> String {
        var builder = Builder(foldsWhitespace: false)
        for scalar in text.unicodeScalars { builder.append(scalar) }
        return builder.finish()
    }

    /// An HTML body as the index holds it: tags and comments out (each a word break), entities
    /// decoded, runs of whitespace one space, apostrophes decided, in one pass.
    ///
    /// `plainRuns`: whether a run of plain ASCII (`isPlainASCII`) is added at once; only a test
    /// turns it off, to compare with adding each byte.
    package static func body(_ html: String, plainRuns: Bool = true) -> String {
        var builder = Builder(foldsWhitespace: true)
        var html = html
        html.makeContiguousUTF8()
        // Over the UTF-8 bytes, not the Unicode scalar view: an import indexes every body, and
        // the view's index checks were most of this function's time. Tags and ASCII go byte by
        // byte; other scalars by the standard library's UTF-8 parser; references by the
        // one decoder, HTMLText.characterReference.
        html.utf8.withContiguousStorageIfAvailable { bytes in
            var i = 0
            while i < bytes.count {
                let byte = bytes[i]
                if byte == UInt8(ascii: "<") {
                    // A tag or a comment: skip to its end; it separates words.
                    var end = i + 1
                    while end < bytes.count && bytes[end] != UInt8(ascii: ">") { end += 1 }
                    i = end + 1
                    builder.tagBreak()
                } else if byte == UInt8(ascii: "&") {
                    // At most 12 scalars of 4 bytes each, as the decoder looks no further.
                    let window = String(decoding: bytes[(i + 1)..<min(i + 49, bytes.count)], as: UTF8.self)
                    let scalars = window.unicodeScalars[...]
                    if let (decoded, rest) = HTMLText.characterReference(scalars) {
                        builder.append(decoded)
                        // A reference is ASCII (name or digits, then `;`): scalars are bytes.
                        i += 1 + scalars.distance(from: scalars.startIndex, to: rest.startIndex)
                    } else {
                        builder.append("&")
                        i += 1
                    }
                } else if plainRuns && isPlainASCII(byte) {
                    // Most of a body: plain ASCII words with single spaces between them, which
                    // `append` would add unchanged (one byte at a time, it was a quarter of the
                    // thread that makes an import's rows). The run ends on a plain byte.
                    var end = i + 1
                    while end < bytes.count {
                        if isPlainASCII(bytes[end]) {
                            end += 1
                        } else if bytes[end] == 0x20, end + 1 < bytes.count, isPlainASCII(bytes[end + 1]) {
                            end += 2
                        } else {
                            break
                        }
                    }
                    builder.appendPlain(bytes[i..<end])
                    i = end
                } else if byte < 0x80 {
                    builder.append(Unicode.Scalar(byte))
                    i += 1
                } else {
                    var parser = Unicode.UTF8.ForwardParser()
                    var rest = bytes[i...].makeIterator()
                    guard case .valid(let encoded) = parser.parseScalar(from: &rest) else { break }  // never: a String is valid UTF-8
                    builder.append(Unicode.UTF8.decode(encoded))
                    i += encoded.count
                }
            }
        }
        return builder.finish()
    }

    /// Index text, scalar by scalar. An apostrophe waits for the scalar after it: between two
    /// letters or digits it is `'` (part of the word), elsewhere `’` (a quotation mark, which the
    /// tokenizer treats as a separator). The snippet markers never reach the text. Builds UTF-8
    /// bytes and asks Unicode's tables only about non-ASCII scalars: an import indexes every
    /// body, and the property lookups were a tenth of its time.
    package struct Builder {
        /// Whether whitespace runs become one space (bodies) or stay as they are (fields, whose
        /// offsets must stay those of the original).
        package let foldsWhitespace: Bool
        private var bytes: [UInt8] = []
        private var last: Unicode.Scalar?
        private var pendingSpace = false
        /// Whether the pending space stands for a tag, not for whitespace the text had.
        private var spaceFromTag = false
        private var pendingApostrophe: (afterWord: Bool, waiting: Bool) = (false, false)

        package init(foldsWhitespace: Bool) { self.foldsWhitespace = foldsWhitespace }

        package mutating func append(_ raw: Unicode.Scalar) {
            let scalar = raw == SearchText.open || raw == SearchText.close ? " " : raw
            if foldsWhitespace && scalar.isWhiteSpace { return wordBreak() }
            resolveApostrophe(before: scalar)
            if pendingSpace {
                if !(spaceFromTag && SearchText.closesUp(scalar)) { put(" ") }
                pendingSpace = false
            }
            if scalar == "'" || scalar == "\u{2019}" || scalar == "\u{02BC}" {
                pendingApostrophe = (last.map(SearchText.isWordScalar) ?? false, true)
            } else {
                put(scalar)
            }
        }

        /// A run of `isPlainASCII` bytes and single spaces, starting and ending with a plain
        /// byte, as `append` would add them one by one: only the first can settle a waiting
        /// apostrophe or follow a pending space, none is an apostrophe, a space between two
        /// plain bytes stays one space, and each goes in as it is.
        package mutating func appendPlain(_ run: Slice<UnsafeBufferPointer<UInt8>>) {
            guard let first = run.first, let final = run.last else { return }
            resolveApostrophe(before: Unicode.Scalar(first))
            if pendingSpace {
                if !(spaceFromTag && SearchText.closesUp(Unicode.Scalar(first))) { put(" ") }
                pendingSpace = false
            }
            bytes.append(contentsOf: run)
            last = Unicode.Scalar(final)
        }

        /// Whitespace between words.
        package mutating func wordBreak() {
            resolveApostrophe(before: nil)
            pendingSpace = !bytes.isEmpty
            spaceFromTag = false
        }

        /// A tag: a word break, except next to punctuation that closes up to a word (`long</a>.`
        /// reads "long.", `(<em>sic</em>)` "(sic)", where every tag as a space gave "long ." and
        /// "( sic )" in snippets). That punctuation is a separator to the tokenizer, so the
        /// words indexed are the same either way; the apostrophe, which is part of words, is
        /// not among it.
        package mutating func tagBreak() {
            resolveApostrophe(before: nil)
            guard !bytes.isEmpty, !pendingSpace else { return }
            if let last, SearchText.opensUp(last) { return }
            pendingSpace = true
            spaceFromTag = true
        }

        package mutating func finish() -> String {
            resolveApostrophe(before: nil)
            return String(decoding: bytes, as: UTF8.self)
        }

        private mutating func put(_ scalar: Unicode.Scalar) {
            if scalar.isASCII {
                bytes.append(UInt8(truncatingIfNeeded: scalar.value))
            } else if let encoded = UTF8.encode(scalar) {
                bytes.append(contentsOf: encoded)
            }
            last = scalar
        }

        private mutating func resolveApostrophe(before next: Unicode.Scalar?) {
            guard pendingApostrophe.waiting else { return }
            let inWord = pendingApostrophe.afterWord && next.map(SearchText.isWordScalar) == true
            put(inWord ? "'" : "\u{2019}")
            pendingApostrophe = (false, false)
        }
    }

    /// Punctuation written against the word before it, and against the word after it.
    static func closesUp(_ scalar: Unicode.Scalar) -> Bool { ".,;:!?)]}\u{BB}\u{201D}".unicodeScalars.contains(scalar) }
    static func opensUp(_ scalar: Unicode.Scalar) -> Bool { "([{\u{AB}\u{201C}".unicodeScalars.contains(scalar) }

    /// Printable ASCII that `Builder.append` adds as it is and `body` reads as text: not
    /// whitespace or a control, not an apostrophe, not the start of a tag or a reference.
    package static func isPlainASCII(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "'") && byte != UInt8(ascii: "<") && byte != UInt8(ascii: "&")
    }

    package static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            let value = scalar.value
            return (0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)
        }
        return scalar.properties.isAlphabetic || scalar.properties.numericType != nil
    }

    /// A snippet or highlight as FTS5 marked it: the text without markers, and each marked
    /// range as an offset and a length in Unicode scalars.
    package static func unmark(_ marked: String) -> (text: String, ranges: [(start: Int, length: Int)]) {
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
