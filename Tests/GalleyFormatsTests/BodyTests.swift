import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyFormats

@Suite struct PlaceholderTests {
    @Test func findsExactAndNearMissPlaceholdersWithTheirLines() {
        let text = "a\n<!-- [ASSET: one] -->\nb <!--[asset:two]--> c\n<!-- [ASSET:  three ] -->\n<!-- plain comment -->"
        let matches = Placeholder.scan(text)
        #expect(matches.map(\.key) == ["one", "two", "three"])
        #expect(matches.map(\.isExact) == [true, false, false])
        #expect(matches.map(\.line) == [2, 3, 4])
        #expect(matches[1].column == 3)
    }

    /// The byte-by-byte scan `Placeholder.scan` replaced (2026-11-26), kept as the oracle.
    static func referenceScan(_ text: String) -> [Placeholder.Match] {
        let bytes = Array(text.utf8)
        var matches: [Placeholder.Match] = []
        var (line, lineStart, i) = (1, 0, 0)
        let n = bytes.count
        func skipSpaces(_ j: inout Int) { while j < n, bytes[j] == 32 || bytes[j] == 9 { j += 1 } }
        while i < n {
            if bytes[i] == 10 { (line, lineStart, i) = (line + 1, i + 1, i + 1); continue }
            guard bytes[i] == 60, i + 3 < n, bytes[i + 1] == 33, bytes[i + 2] == 45, bytes[i + 3] == 45 else { i += 1; continue }
            var j = i + 4
            skipSpaces(&j)
            guard j < n, bytes[j] == 91 else { i += 4; continue }
            j += 1
            skipSpaces(&j)
            guard j + 5 <= n, String(decoding: bytes[j..<j + 5], as: UTF8.self).lowercased() == "asset" else { i += 4; continue }
            j += 5
            skipSpaces(&j)
            guard j < n, bytes[j] == 58 else { i += 4; continue }
            j += 1
            let keyStart = j
            while j < n, bytes[j] != 93, bytes[j] != 10 { j += 1 }
            guard j < n, bytes[j] == 93 else { i += 4; continue }
            let keyEnd = j
            j += 1
            skipSpaces(&j)
            guard j + 3 <= n, bytes[j] == 45, bytes[j + 1] == 45, bytes[j + 2] == 62 else { i += 4; continue }
            j += 3
            let matchText = String(decoding: bytes[i..<j], as: UTF8.self)
            let key = String(decoding: bytes[keyStart..<keyEnd], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            matches.append(Placeholder.Match(
                key: key, text: matchText, isExact: matchText == Placeholder.text(for: key), line: line,
                column: String(decoding: bytes[lineStart..<i], as: UTF8.self).count + 1, utf8Range: i..<j))
            i = j
        }
        return matches
    }

    @Test func theScanFindsWhatTheByteByByteScanFound() {
        // Texts made of the pieces placeholders and their near misses are made of, in random
        // order: every match, line, column and range the same.
        let pieces = ["<!--", " ", "\t", "[", "asset", "ASSET", "AsSeT", "assez", ":", "a.jpg", " k ", "]", "-->", "--", "<", "\n",
                      "é", "😀", "x", "<p>", "<!-- [ASSET: id] -->", "<!--[asset:b]-->", "\r\n",
                      "<!-- [", "ASSET:", "assez:", "asseT :", " k] -->", "] -->", "<!-- [assez: k] -->", "<!-- [AsseS: k] -->"]
        var generator = SeededGenerator(state: 12)
        for round in 0..<3_000 {
            let text = (0..<generator.below(40)).map { _ in pieces[generator.below(pieces.count)] }.joined()
            let found = Placeholder.scan(text)
            let expected = Self.referenceScan(text)
            #expect(found == expected, "round \(round): \(text.debugDescription)")
            if found != expected { break }
        }
    }

    @Test(arguments: [("plain ASCII", 0), ("a\r\nb", 1), ("a\rb", 0), ("😀", 1), ("é", 0), ("e\u{301}", 1), ("🇫🇷 x", 3), ("", 0)])
    func theUTF16SurplusIsUnitsLessCharacters(_ text: String, _ surplus: Int) {
        #expect(BodyBuilder.utf16Surplus(text) == surplus)
        #expect(text.utf16.count - text.count == surplus)
    }

    @Test func twoPlaceholdersOnOneLineAreTwoMatches() {
        let matches = Placeholder.scan("<p><!-- [ASSET: a] --><!-- [ASSET: b] --></p>")
        #expect(matches.map(\.key) == ["a", "b"])
    }

    @Test func aPlaceholderDoesNotSpanLines() {
        #expect(Placeholder.scan("<!-- [ASSET: a\n] -->").isEmpty)
    }

    @Test func finishPutsEveryPlaceholderAloneOnItsLine() {
        let html = "<p>Intro <!-- [ASSET: a] --> more</p>\n<p><!-- [ASSET: b] --><!-- [ASSET: c] --></p>\n"
        #expect(BodyBuilder.finish(html) == """
            <p>Intro
            <!-- [ASSET: a] -->
            more</p>
            <p>
            <!-- [ASSET: b] -->
            <!-- [ASSET: c] -->
            </p>

            """)
    }

    @Test func finishLeavesABodyWithoutPlaceholdersAlone() {
        let html = "<p>café 😀</p>\n"
        #expect(BodyBuilder.finish(html) == html)
    }

    /// Wire format §3.1: Dumpling searches only the first `characters.count` UTF-16 units.
    @Test func finishPadsBodiesWhoseUTF16LengthExceedsTheirCharacterCount() {
        let html = "<p>😀😀 e\u{301}</p>\n<!-- [ASSET: a] -->\n"
        let body = BodyBuilder.finish(html)
        let lastPlaceholderEnd = body.utf16.count - (body.utf16.count - html.utf16.count)
        #expect(body.count >= lastPlaceholderEnd, "the search window reaches the last placeholder")
        #expect(body.hasPrefix(html))
    }
}

@Suite struct BodyBuilderTests {
    let builder = BodyBuilder()

    @Test func markdownPlaceholdersSurviveConversionAsBlocksAndInline() {
        let markdown = """
            Intro with **bold**.

            <!-- [ASSET: photo.jpg] -->

            Inline <!-- [ASSET: sound.mp3] --> here.

            - item with <!-- [ASSET: photo.jpg] -->
            """
        let result = builder.build(markdown, format: .markdown, file: "a.md", lineOffset: 0,
                                   ids: ["photo.jpg": "id1", "sound.mp3": "id2"])
        #expect(result.diagnostics.isEmpty)
        #expect(result.body.contains("<strong>bold</strong>"))
        #expect(result.body.contains("\n<!-- [ASSET: id1] -->\n"))
        #expect(result.body.contains("<p>Inline\n<!-- [ASSET: id2] -->\nhere.</p>"))
        #expect(!result.body.contains("raw HTML omitted"))
        #expect(!result.body.contains("photo.jpg"))
        #expect(Placeholder.scan(result.body).count == 3)
    }

    @Test func htmlBodiesPassThroughExceptLineEndings() {
        let html = "<p>One</p>\r\n<p>Two</p>\r<p>Three</p>\n"
        let result = builder.build(html, format: .html, file: "a.html", lineOffset: 0, ids: [:])
        #expect(result.body == "<p>One</p>\n<p>Two</p>\n<p>Three</p>\n")
    }

    @Test func unknownAndMisspelledPlaceholdersAreLocatedInTheSourceFile() {
        let text = "Line one\n<!-- [ASSET: phot.jpg] -->\n<!-- [Asset: photo.jpg] -->\n"
        let result = builder.build(text, format: .markdown, file: "articles/a/article.md", lineOffset: 7,
                                   ids: ["photo.jpg": "id1"])
        #expect(result.diagnostics.map(\.id) == [Check.bodyPlaceholderUnknown.id, Check.bodyPlaceholderMalformed.id])
        #expect(result.diagnostics.map { $0.location?.line } == [9, 10])
        #expect(result.diagnostics[0].hint == "Did you mean `photo.jpg`?")
    }

    @Test func markdownTablesAndStrikethroughAreOn() {
        let result = builder.build("| a | b |\n|---|---|\n| 1 | 2 |\n\n~~gone~~\n", format: .markdown, file: "a.md",
                                   lineOffset: 0, ids: [:])
        #expect(result.body.contains("<table>"))
        #expect(result.body.contains("<del>gone</del>"))
    }
}

@Suite struct FrontMatterTests {
    @Test func splitsFieldsFromTheBodyAndCountsLines() {
        let split = FrontMatter.split("---\ntitle: A\nx: 1\n---\nBody\n")
        #expect(split.yaml == "title: A\nx: 1\n")
        #expect(split.body == "Body\n")
        #expect(split.bodyLineOffset == 4)
        #expect(!split.unclosed)
    }

    @Test func crlfFilesSplitToo() {
        let split = FrontMatter.split("---\r\ntitle: A\r\n---\r\nBody\r\n")
        #expect(split.yaml == "title: A\n")
        #expect(split.body == "Body\n")
    }

    @Test func noFrontMatterAndUnclosedFrontMatter() {
        #expect(FrontMatter.split("Just text\n").yaml == nil)
        #expect(FrontMatter.split("---\ntitle: A\n").unclosed)
    }
}

@Suite struct SourceNameTests {
    @Test(arguments: [
        ("photo.jpg", "photo.jpg"), ("keepers log.jpg", "keepers-log.jpg"), ("Café (1).png", "Caf-1-.png"),
        (".hidden.png", "hidden.png"), ("日本.jpg", "jpg"), ("a--b.jpg", "a-b.jpg"),
    ])
    func zipNamesFollowTheProducerProfile(input: String, expected: String) {
        #expect(SourceTree.zipSafeName(input) == expected)
    }

    /// The Foundation version `zipSafeName` replaced (2026-11-26), the oracle for random names.
    static func referenceZipSafeName(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            let keep = scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "." || scalar == "_" || scalar == "-")
            let c: Character = keep ? Character(scalar) : "-"
            if c == "-" && out.last == "-" { continue }
            out.append(c)
        }
        while let first = out.first, first == "." || first == "-" { out.removeFirst() }
        return out.isEmpty ? "file" : out
    }

    @Test func zipNamesAgreeWithTheFoundationWayOnRandomNames() {
        let pieces = ["a", "Z", "0", "9", ".", "-", "_", " ", "é", "日", "\u{301}", "👩‍👧", "/", "(", "~", "\u{0}", "\t", "--", ".."]
        var generator = SeededGenerator(state: 9)
        for _ in 0..<3_000 {
            let name = (0..<generator.below(9)).map { _ in pieces[generator.below(pieces.count)] }.joined()
            #expect(SourceTree.zipSafeName(name) == Self.referenceZipSafeName(name), "\(name.debugDescription)")
        }
    }

    @Test(arguments: ["01-band", "2_band", "10. band"])
    func slugsDropTheOrderPrefix(folder: String) {
        #expect(IssueSourceLoader.slug(of: folder) == "band")
    }

    @Test(arguments: ["band", "2026", "01-"])
    func foldersWithoutAPrefixKeepTheirName(folder: String) {
        #expect(IssueSourceLoader.slug(of: folder) == folder)
    }
}

/// Markdown as editors write it: footnotes and the GitHub extensions, each switched on on
/// purpose, and what the render sanitizer keeps of them.
@Suite struct MarkdownExtensionTests {
    static let markdown = """
        A claim.[^1] ~~Old~~ new, see https://example.com/report.

        | Port | Ships |
        |:-----|------:|
        | Oslo |    12 |

        - [x] Moor the ferry
        - [ ] Log the tide

        [^1]: The harbour master's log, 1953.
        """

    @Test func footnotesTablesStrikethroughAutolinksAndTaskListsAreConverted() {
        let html = CommonMark().html(fromMarkdown: Self.markdown)
        #expect(!html.contains("[^1]"), "footnotes are not literal: \(html)")
        #expect(html.contains("<sup class=\"footnote-ref\"><a href=\"#fn-1\""))
        #expect(html.contains("<section class=\"footnotes\""))
        #expect(html.contains("<del>Old</del>"))
        #expect(html.contains("<a href=\"https://example.com/report\">https://example.com/report</a>"))
        #expect(html.contains("<th align=\"left\">Port</th>") && html.contains("<td align=\"right\">12</td>"))
        #expect(html.contains("<input type=\"checkbox\" checked=\"\" disabled=\"\" />"))
    }

    @Test func theSanitizerKeepsEveryExtensionsMarkup() {
        let html = CommonMark().html(fromMarkdown: Self.markdown)
        let sanitized = HTMLSanitizer { _ in false }.sanitize(html)
        #expect(sanitized.removed.isEmpty, "\(sanitized.removed)")
        for kept in ["<del>Old</del>", "<td align=\"right\">12</td>", "<input type=\"checkbox\" disabled checked>",
                     "<section class=\"footnotes\"", "href=\"#fn-1\"", "<a href=\"https://example.com/report\">"] {
            #expect(sanitized.html.contains(kept), "\(kept) in \(sanitized.html)")
        }
    }
}

@Suite struct LocalReferenceTests {
    @Test func findsTheAttributesThatNameFilesWithTheirPlaces() {
        let html = """
            <p>Intro <img src="chart.png" alt="A &amp; B" title='T'></p>
            <!-- <img src="commented.png"> -->
            <video controls poster=poster.jpg><source src="clip.mp4" type="video/mp4"></video>
            <script>var s = '<img src="scripted.png">';</script>
            <a href="report%20one.pdf#page=2">r</a> <a href="https://example.com/x.png">x</a>
            <a href="#top">top</a> <a href="mailto:a@example.com">m</a> <img src="/abs.png"> <img src="//cdn/x.png">
            """
        let found = LocalReferences.scan(html)
        #expect(found.map(\.path) == ["chart.png", "poster.jpg", "clip.mp4", "report one.pdf"])
        #expect(found.map { "\($0.element)@\($0.attribute)" } == ["img@src", "video@poster", "source@src", "a@href"])
        #expect(found[0].alt == "A & B" && found[0].title == "T" && found[0].isImage)
        #expect((found[0].line, found[0].column) == (1, 20))
        #expect((found[1].line, found[1].column) == (3, 24))
        #expect(found[3].suffix == "#page=2" && found[3].written == "report%20one.pdf#page=2")
    }

    @Test(arguments: [
        ("chart.png", true), ("images/a b.png", true), ("../x.pdf", true), ("C:/x.png", true),
        ("https://x/y.png", false), ("data:image/png;base64,AA", false), ("#frag", false), ("/abs", false),
        ("//host/x", false), ("\\\\host\\x", false), ("?q=1", false), ("", false), ("tel:+1", false), ("x-y+z.1:stuff", false),
    ])
    func localMeansRelative(value: String, local: Bool) {
        #expect(LocalReferences.isLocal(value) == local)
    }

    @Test func relocatingRewritesOnlyLocalValuesAndKeepsTheirSuffix() {
        let html = "<a href=\"r.pdf?x=1#p\">r</a><img src='a.png'><img src=\"https://x/b.png\">"
        let out = LocalReferences.relocating(html) { "../assets/" + $0.path }
        #expect(out == "<a href=\"../assets/r.pdf?x=1#p\">r</a><img src='../assets/a.png'><img src=\"https://x/b.png\">")
    }

    @Test func characterReferencesAreDecoded() {
        #expect(HTMLText.decodeReferences("a&amp;b&#39;c&#x41;&unknown;&") == "a&b'cA&unknown;&")
    }

    @Test func aMarkdownImageIsLocatedWhereItIsWritten() {
        let builder = BodyBuilder()
        let prepared = builder.prepare("Text.\n\nSee ![A chart](charts/q1.png \"Q1\") and [r](<my report.pdf>).\n",
                                       format: .markdown, file: "a.md", lineOffset: 4)
        #expect(prepared.references.map(\.reference.path) == ["charts/q1.png", "my report.pdf"])
        #expect(prepared.references.map { "\($0.location.line ?? 0):\($0.location.column ?? 0)" } == ["7:16", "7:45"])
        let (body, found) = builder.build(prepared, ids: [:], links: [
            "charts/q1.png": PreparedBody.Target(name: "a-q1.png", assetID: "id-1"),
            "my report.pdf": PreparedBody.Target(name: "a-my report.pdf"),
        ])
        #expect(found.isEmpty)
        #expect(body == "<p>Text.</p>\n<p>See\n<!-- [ASSET: id-1] -->\nand <a href=\"a-my%20report.pdf\">r</a>.</p>\n")
    }
}
