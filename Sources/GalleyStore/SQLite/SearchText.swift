import GRDB
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
enum SearchText {
    static let tokenizer = FTS5TokenizerDescriptor.unicode61(diacritics: .remove, tokenCharacters: ["'"])

    /// The version of the text `field` and `body` make. The index keeps no copy of that text
    /// (migration v12): FTS5 reads it back through `articleSearchSource`, which makes it from the
    /// article's row with these two functions, to take an article's words out of the index when
    /// the row goes. Should they make other text than when the article was indexed, other words
    /// would be taken out and the index would be corrupt; so a change to what they make bumps
    /// this, and a store indexed under another version is rebuilt when next opened
    /// (`StoreSchema.migrate`). `SearchTextTests` holds a digest of what they make at this version.
    static let version = 1

    /// `field` and `body` as SQL functions, for `articleSearchSource`: every connection to a
    /// store registers them (`register`). Deterministic, so SQLite may use them in a view.
    static let functions = [
        DatabaseFunction("galleySearchField", argumentCount: 1, pure: true) { values in
            field(values.first.flatMap { String.fromDatabaseValue($0) } ?? "")
        },
        DatabaseFunction("galleySearchBody", argumentCount: 1, pure: true) { values in
            body(values.first.flatMap { String.fromDatabaseValue($0) } ?? "")
        },
    ]

    static func register(_ db: Database) {
        for function in functions { db.add(function: function) }
    }

    /// The version the store's index was built under (SQLite's `user_version`, which nothing
    /// else in the store uses).
    static func indexedVersion(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
    }

    /// Builds the index again from the articles, under this version.
    static func rebuild(_ db: Database) throws {
        try db.execute(sql: "INSERT INTO articleSearch (articleSearch) VALUES ('rebuild')")
        try db.execute(sql: "PRAGMA user_version = \(version)")
    }

    /// `rebuild` if the index was built under another version (see `version`).
    static func rebuildIfChanged(_ db: Database) throws {
        if try indexedVersion(db) != version { try rebuild(db) }
    }

    /// How many articles the index holds that the store does not. FTS5 keeps a row of
    /// `articleSearch_docsize` for each article indexed; through the index itself such a row is
    /// invisible, its text coming from the articles. Only `rebuild` takes one out.
    static let orphansSQL = "SELECT COUNT(*) FROM articleSearch_docsize WHERE id NOT IN (SELECT id FROM article)"

    /// The snippet markers: private-use characters that normalised text never holds.
    static let open: Unicode.Scalar = "\u{E000}"
    static let close: Unicode.Scalar = "\u{E001}"

    /// A field as the index holds it (title, dek, keywords, a query): apostrophes decided,
    /// one scalar for one scalar, so offsets into it are offsets into the original.
    static func field(_ text: String) -> String {
        var builder = Builder(foldsWhitespace: false)
        for scalar in text.unicodeScalars { builder.append(scalar) }
        return builder.finish()
    }

    /// An HTML body as the index holds it: tags and comments out (each a word break), entities
    /// decoded, runs of whitespace one space, apostrophes decided, in one pass.
    ///
    /// `plainRuns`: whether a run of plain ASCII (`isPlainASCII`) is added at once; only a test
    /// turns it off, to compare with adding each byte.
    static func body(_ html: String, plainRuns: Bool = true) -> String {
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
                    builder.wordBreak()
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
    struct Builder {
        /// Whether whitespace runs become one space (bodies) or stay as they are (fields, whose
        /// offsets must stay those of the original).
        let foldsWhitespace: Bool
        private var bytes: [UInt8] = []
        private var last: Unicode.Scalar?
        private var pendingSpace = false
        private var pendingApostrophe: (afterWord: Bool, waiting: Bool) = (false, false)

        init(foldsWhitespace: Bool) { self.foldsWhitespace = foldsWhitespace }

        mutating func append(_ raw: Unicode.Scalar) {
            let scalar = raw == SearchText.open || raw == SearchText.close ? " " : raw
            if foldsWhitespace && scalar.isWhiteSpace { return wordBreak() }
            resolveApostrophe(before: scalar)
            if pendingSpace {
                put(" ")
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
        mutating func appendPlain(_ run: Slice<UnsafeBufferPointer<UInt8>>) {
            guard let first = run.first, let final = run.last else { return }
            resolveApostrophe(before: Unicode.Scalar(first))
            if pendingSpace {
                put(" ")
                pendingSpace = false
            }
            bytes.append(contentsOf: run)
            last = Unicode.Scalar(final)
        }

        /// A tag or whitespace between words.
        mutating func wordBreak() {
            resolveApostrophe(before: nil)
            pendingSpace = !bytes.isEmpty
        }

        mutating func finish() -> String {
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

    /// Printable ASCII that `Builder.append` adds as it is and `body` reads as text: not
    /// whitespace or a control, not an apostrophe, not the start of a tag or a reference.
    static func isPlainASCII(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "'") && byte != UInt8(ascii: "<") && byte != UInt8(ascii: "&")
    }

    static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            let value = scalar.value
            return (0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)
        }
        return scalar.properties.isAlphabetic || scalar.properties.numericType != nil
    }

    /// Adds an article to the search index: the row id, then `fields`.
    static let insertSQL = "INSERT INTO articleSearch (rowid, title, dek, keywords, body) VALUES (?, ?, ?, ?, ?)"

    /// An article's title, dek, keywords and body as the index holds them, in `insertSQL`'s order.
    static func fields(title: String, dek: String, keywords: String, body html: String) -> [String] {
        [field(title), field(dek), field(keywords), body(html)]
    }

    /// `insertSQL`'s values, for `Statement.executeBinding`.
    static func values(_ rowID: Int64, _ fields: [String]) -> [DatabaseValue] {
        var values = [rowID.databaseValue]
        for field in fields { values.append(field.databaseValue) }
        return values
    }

    /// Adds an article to the search index, as the v4 migration's rebuild does (import makes
    /// `fields` on another thread).
    static func index(_ db: Database, rowID: Int64, title: String, dek: String, keywords: String, body html: String) throws {
        let insert = try db.cachedStatement(sql: insertSQL)
        try insert.executeBinding(values(rowID, fields(title: title, dek: dek, keywords: keywords, body: html)))
    }

    /// The full-text table: title, dek, keywords, body, split by `tokenizer` (migration v1's
    /// `unicode61`, v4's `SearchText.tokenizer`).
    static func createIndex(_ db: Database, tokenizer: FTS5TokenizerDescriptor) throws {
        try db.create(virtualTable: "articleSearch", using: FTS5()) { t in
            t.tokenizer = tokenizer
            t.column("title")
            t.column("dek")
            t.column("keywords")
            t.column("body")
        }
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
