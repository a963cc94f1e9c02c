import Testing
@testable import GalleyCore

/// Strings in the located JSON parser (latest.json's reader): valid UTF-8 comes through as it
/// is, and every kind of invalid UTF-8 is refused where it ends, including the one whose
/// decoded form has the same length as its bytes.
@Suite struct LocatedJSONStringTests {
    private func parsed(_ inner: [UInt8]) throws(LocatedJSON.ParseError) -> String? {
        try LocatedJSON.parse(Array("{\"k\": \"".utf8) + inner + Array("\"}".utf8))["k"]?.string
    }

    @Test func validTextComesThroughAsItIs() throws {
        for text in ["", "plain", "Crème brûlée", "東京", "👩‍👩‍👧", "\u{FFFD} stays", "a\u{E000}b"] {
            #expect(try parsed(Array(text.utf8)) == text)
        }
        #expect(try parsed(Array("tab\\tquote\\\"\\u00e9\\ud83d\\ude00".utf8)) == "tab\tquote\"é😀")
    }

    /// A document handed over a few bytes at a time gives the strings (and refuses the bad one)
    /// as the whole does: strings cut by a chunk's end are put together before they are made.
    @Test(arguments: [1, 2, 3, 7, 64])
    func chunksGiveWhatTheWholeGives(size: Int) throws {
        let document = Array("{\"a\": \"Crème brûlée — 東京\", \"b\": \"tab\\tend\", \"c\": \"👩‍👩‍👧 and more words\"}".utf8)
        var offset = 0
        var parser = LocatedJSON.Parser {
            guard offset < document.count else { return nil }
            defer { offset += size }
            return Array(document[offset..<min(offset + size, document.count)])
        }
        let parsed = try parser.parseDocument()
        #expect(parsed["a"]?.string == "Crème brûlée — 東京")
        #expect(parsed["b"]?.string == "tab\tend")
        #expect(parsed["c"]?.string == "👩‍👩‍👧 and more words")

        let bad = Array("{\"a\": \"ok ".utf8) + [0xF0, 0x90, 0x80] + Array("\"}".utf8)
        var at = 0
        var badParser = LocatedJSON.Parser {
            guard at < bad.count else { return nil }
            defer { at += size }
            return Array(bad[at..<min(at + size, bad.count)])
        }
        #expect(throws: LocatedJSON.ParseError.self) { _ = try badParser.parseDocument() }
    }

    @Test(arguments: [
        [0x80],  // a continuation byte alone
        [0xC3],  // a 2-byte sequence cut short
        [0xC0, 0xAF],  // an overlong form
        [0xED, 0xA0, 0x80],  // a surrogate, encoded
        [0xF0, 0x90, 0x80],  // a 4-byte sequence cut after 3: decodes to 3 bytes (U+FFFD)
        [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
        [0xFF],
        Array("ok ".utf8) + [0xE2, 0x82] + Array(" then".utf8),
        [0xC3] + Array("\\n".utf8),  // beside an escape: the string is put together first
    ] as [[UInt8]])
    func invalidUTF8IsRefused(_ bytes: [UInt8]) {
        #expect(throws: LocatedJSON.ParseError.self) { _ = try parsed(bytes) }
        do {
            _ = try parsed(bytes)
        } catch {
            #expect(error.message == "a string is not valid UTF-8")
            #expect(error.line == 1)
        }
    }
}
