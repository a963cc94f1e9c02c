import Testing
@testable import GalleyCore
@testable import GalleyStore
@testable import GalleyStorePostgres
@testable import GalleyStoreSQLite

/// The index's text (SearchText): what import, the v4 migration and queries all go through.
@Suite struct SearchTextTests {
    /// What `field` and `body` make, as a digest, at `SearchText.version`. The index keeps no
    /// copy of its text and takes an article's words out with what these make of its row then
    /// (v12): a change to what they make must bump `SearchText.version` (a store indexed under
    /// another version is rebuilt when opened), and then record the new digest here.
    @Test func whatTheIndexTextMakesIsPinnedToItsVersion() {
        let samples = [
            "Queequeg's harpoon", "Queequeg\u{2019}s", "'tis the sailors' way", "rock 'n' roll", "Crème  brûlée\n'x'", "東京 👩‍👩‍👧 it’s",
            "<p>Ahab&rsquo;s   leg</p>\n\n<!-- [ASSET: x] --><p>fish &amp; chips&nbsp;&#x41;&#66; &bogus; &</p>", "<b>x</b>'s",
            "unclosed <tag", "a&#x1F600;b &#233;", "  lead and trail  ", "x\u{E000}y\u{E001}z", "tab\tnew\nline\u{85}nel\u{A0}nbsp",
            "\u{02BC}modifier \u{2018}quoted\u{2019} \"double\" 1851's", "ÀÉÎÕÜ ǅ ﬁ Ω", "",
            "<p>is <a>long</a>. (<em>sic</em>) tables</p>.",
        ]
        var text = ""
        for sample in samples { text += SearchText.field(sample) + "\u{1}" + SearchText.body(sample) + "\u{2}" }
        let digest = SHA256Hasher.hex(of: text)
        #expect(SearchText.version == 2 && digest == "adce13737d11074fd21f1ee7c808bfb15162fcfe5eb12f87f16398d1d61438fd", "SearchText makes other text: bump SearchText.version and record \(digest)")
    }

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
        // A tag beside punctuation that closes up to a word leaves no space in the snippet;
        // whitespace the text had stays.
        #expect(SearchText.body("<p>The ropewalk is <a href=\"r\">long</a>. See also the <a>tide</a> tables</p>.")
                == "The ropewalk is long. See also the tide tables.")
        #expect(SearchText.body("(<em>sic</em>) \u{201C}<i>quoted</i>\u{201D}, <b>x</b>!") == "(sic) \u{201C}quoted\u{201D}, x!")
        #expect(SearchText.body("a <b>x</b> , b") == "a x , b")
        #expect(SearchText.body("  <p> </p> ") == "")
        #expect(SearchText.body("unclosed <tag") == "unclosed")
        // Scalars of every UTF-8 length, beside tags and references, come through whole.
        #expect(SearchText.body("<i>Crème</i> brûlée — 東京 👩‍👩‍👧&amp;é") == "Crème brûlée — 東京 👩‍👩‍👧&é")
        #expect(SearchText.body("café&") == "café&", "an ampersand at the very end")
        #expect(SearchText.body("a&#x1F600;b &#233;") == "a😀b é")
    }

    /// A run of plain ASCII is added at once; the text must be what adding it byte by byte
    /// gives, whatever surrounds the run (apostrophes waiting on either side, spaces, tags,
    /// references, other scripts, markers).
    @Test func plainRunsGiveTheTextByteByByteGives() {
        let pieces = ["Ahab", "s", "1851", "x-y", "(a)", "\"", "'", "\u{2019}", "\u{02BC}", " ", "  \n\t", "<p>", "</b>", "<!-- c -->",
                      "&amp;", "&rsquo;", "&#39;", "&bogus;", "&", "é", "東京", "👩‍👩‍👧", "\u{E000}", "\u{E001}", "~", "\u{7F}", "\u{1}", "<open"]
        var generator = SystemRandomNumberGenerator()
        var cases = ["", "plain", "it's", "'tis", "sailors' ", "a'b'c", "x<b>y</b>'s", "  lead", "trail  ", "word ", "word <b>x</b>",
                     "one two  three\tfour", "a&amp;'b"]
        for _ in 0..<2_000 {
            let count = Int.random(in: 1...12, using: &generator)
            cases.append((0..<count).map { _ in pieces.randomElement(using: &generator) ?? "" }.joined())
        }
        for html in cases {
            #expect(SearchText.body(html) == SearchText.body(html, plainRuns: false), "\(html.debugDescription)")
        }
    }
}
