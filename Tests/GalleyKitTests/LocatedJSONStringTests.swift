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

    @Test(arguments: [
        [0x80],  // a continuation byte alone
        [0xC3],  // a 2-byte sequence cut short
        [0xC0, 0xAF],  // an overlong form
        [0xED, 0xA0, 0x80],  // a surrogate, encoded
        [0xF0, 0x90, 0x80],  // a 4-byte sequence cut after 3: decodes to 3 bytes (U+FFFD)
        [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
        [0xFF],
        Array("ok ".utf8) + [0xE2, 0x82] + Array(" then".utf8),
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
