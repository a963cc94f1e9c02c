import Testing
@testable import GalleyStore

/// The index's text (SearchText): what import, the v4 migration and queries all go through.
@Suite struct SearchTextTests {
    @Test func apostrophesInsideWordsStayQuotationMarksSeparate() {
        #expect(SearchText.field("Queequeg's harpoon") == "Queequeg's harpoon")
        #expect(SearchText.field("Queequeg\u{2019}s") == "Queequeg's")
        #expect(SearchText.field("'tis the sailors' way") == "\u{2019}tis the sailors\u{2019} way")
        #expect(SearchText.field("''") == "\u{2019}\u{2019}")
        #expect(SearchText.field("rock 'n' roll") == "rock \u{2019}n\u{2019} roll")
    }

    @Test func aFieldKeepsOneScalarForOneSoOffsetsHold() {
        for text in ["Crème  brûlée\n'x'", "a\u{E000}b\u{E001}c", "it's", "👩‍👩‍👧 it’s"] {
            #expect(SearchText.field(text).unicodeScalars.count == text.unicodeScalars.count, "\(text)")
        }
        #expect(!SearchText.field("a\u{E000}b").unicodeScalars.contains(SearchText.open), "markers never reach the index")
    }

    @Test func aBodyIsOneLineOfWordsWithEntitiesDecoded() {
        let html = "<p>Ahab&rsquo;s   leg</p>\n\n<!-- [ASSET: x] --><p>fish &amp; chips&nbsp;&#x41;&#66; &bogus; &</p>"
        #expect(SearchText.body(html) == "Ahab's leg fish & chips AB &bogus; &")
        #expect(SearchText.body("<b>x</b>'s") == "x \u{2019}s", "a tag breaks the word before the apostrophe")
        #expect(SearchText.body("  <p> </p> ") == "")
        #expect(SearchText.body("unclosed <tag") == "unclosed")
        // Scalars of every UTF-8 length, beside tags and references, come through whole.
        #expect(SearchText.body("<i>Crème</i> brûlée — 東京 👩‍👩‍👧&amp;é") == "Crème brûlée — 東京 👩‍👩‍👧&é")
        #expect(SearchText.body("café&") == "café&", "an ampersand at the very end")
        #expect(SearchText.body("a&#x1F600;b &#233;") == "a😀b é")
    }
}
