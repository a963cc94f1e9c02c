import Foundation
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit

@Suite struct AssetMarkupTests {
    let photo = AssetRecord(
        id: "p1", kind: .image, caption: "The band in rehearsal", source: "Photo: C. Photographer",
        fileName: "photo-1.jpg", crop350: "photo-1-350x350.jpg",
        metadata: .object([("alt", .string("Four people with guitars")), ("width", .int(2000)), ("height", .int(1333))]))
    let sound = AssetRecord(id: "s1", kind: .sound, caption: "Interview (12 min)", source: "", fileName: "interview.mp3",
                            crop350: "interview-350x350.jpg")
    let video = AssetRecord(id: "v1", kind: .video, caption: "Studio session", source: "Video: E. Director",
                            fileName: "clip.mp4", crop350: "clip-350x350.jpg")

    @Test func semanticImage() {
        let html = AssetMarkup(style: .semantic, assetBase: "assets/").html(for: photo)
        #expect(html == """
            <figure class="asset asset-image"><img src="assets/photo-1.jpg" alt="Four people with guitars" loading="lazy" decoding="async" width="2000" height="1333"><figcaption><span class="caption">The band in rehearsal</span> <span class="credit">Photo: C. Photographer</span></figcaption></figure>
            """)
    }

    @Test func semanticSoundAndVideoAreClosedAndTyped() {
        let markup = AssetMarkup(style: .semantic, assetBase: "")
        #expect(markup.html(for: sound) == """
            <figure class="asset asset-sound"><audio controls preload="none"><source src="interview.mp3" type="audio/mpeg"></audio><figcaption><span class="caption">Interview (12 min)</span></figcaption></figure>
            """)
        #expect(markup.html(for: video).contains(
            "<video controls preload=\"metadata\" playsinline poster=\"clip-350x350.jpg\"><source src=\"clip.mp4\" type=\"video/mp4\"></video>"))
    }

    @Test func theAltTextFallsBackToTheCaption() {
        var plain = photo
        plain.metadata = nil
        #expect(AssetMarkup().html(for: plain).contains("alt=\"The band in rehearsal\""))
    }

    @Test(arguments: [RenderStyle.semantic, .dumpling])
    func userTextComesOutInert(style: RenderStyle) throws {
        var hostile = photo
        hostile.caption = "<script>alert(1)</script>"
        hostile.source = "' onerror='x"
        hostile.fileName = "it's \"here\".jpg"
        hostile.metadata = .object([("alt", .string("\" onload=\"alert(2)"))])
        let html = AssetMarkup(style: style, assetBase: "").html(for: hostile)
        #expect(!html.contains("<script>"))
        #expect(html.contains("&lt;script&gt;"))
        let inspection = HTMLInspector.inspect(html)
        #expect(inspection.scripts.isEmpty && inspection.eventHandlers.isEmpty, "\(html)")
    }

    /// Wire format §3.2: Dumpling's output for the §7 example's first article, byte for byte.
    @Test func dumplingStyleMatchesDumplingsOwnOutput() throws {
        let base = "file:///var/mobile/Containers/Data/Application/UUID/Library/Caches/org.example.mag.issue.20150101/"
        let assets = [
            "54a5c0e1b1a2c3d4e5f60301": AssetRecord(
                id: "54a5c0e1b1a2c3d4e5f60301", kind: .image, caption: "The band in rehearsal",
                source: "Photo: C. Photographer", fileName: "photo-1.jpg", crop350: "photo-1-350x350.jpg"),
            "54a5c0e1b1a2c3d4e5f60302": AssetRecord(
                id: "54a5c0e1b1a2c3d4e5f60302", kind: .sound, caption: "Interview (12 min)", source: "",
                fileName: "interview.mp3", crop350: "interview-350x350.jpg"),
        ]
        let body = "<p>Intro paragraph.</p>\n<p><!-- [ASSET: 54a5c0e1b1a2c3d4e5f60301] --></p>\n<p>Listen to the interview:</p>\n<!-- [ASSET: 54a5c0e1b1a2c3d4e5f60302] -->\n<p>End.</p>\n"
        let expander = try PlaceholderExpander(markup: AssetMarkup(style: .dumpling, assetBase: base))
        let result = expander.expand(body) { assets[$0] }
        let expected = "<p>Intro paragraph.</p>\n<div class='article_image'><img src='\(base)photo-1.jpg' alt='Tap to enlarge image' /><div class='article_caption'><span class='source'>Photo: C. Photographer</span><span class='caption'>The band in rehearsal</span></div></div><p></p>\n<p>Listen to the interview:</p>\n<div class='article_image'><audio src='\(base)interview.mp3' controls='controls' /><div class='article_caption'><span class='caption'>Interview (12 min)</span></div></div>\n<p>End.</p>\n"
        #expect(result.html == expected)
        #expect(result.missingIDs.isEmpty)
    }
}

@Suite struct PlaceholderExpanderTests {
    let asset = AssetRecord(id: "a1", kind: .image, fileName: "a.jpg", crop350: "a.jpg")

    @Test func everyOccurrenceIsReplaced() throws {
        let expander = try PlaceholderExpander(markup: AssetMarkup())
        let result = expander.expand("<!-- [ASSET: a1] -->\nx\n<!-- [ASSET: a1] -->\n") { $0 == "a1" ? asset : nil }
        #expect(result.html.components(separatedBy: "<figure").count == 3)
    }

    @Test func aCustomPatternCapturesTheIDInItsNamedGroup() throws {
        let expander = try PlaceholderExpander(pattern: #"\{\{asset (?<id>[a-z0-9]+)\}\}"#, markup: AssetMarkup())
        let result = expander.expand("<p>{{asset a1}}</p><p>{{asset zz}}</p>") { $0 == "a1" ? asset : nil }
        #expect(result.html.hasPrefix("<p><figure"))
        #expect(result.html.hasSuffix("<p></p>"))
        #expect(result.missingIDs == ["zz"])
    }

    @Test func patternsWithoutAnIDGroupOrInvalidAreRefused() {
        #expect(throws: GalleyError.self) { try PlaceholderExpander(pattern: "<!-- (\\w+) -->", markup: AssetMarkup()) }
        #expect(throws: GalleyError.self) { try PlaceholderExpander(pattern: "(?<id>[", markup: AssetMarkup()) }
    }

    @Test(arguments: [(MissingAssetPolicy.remove, "<p></p>"), (.keep, "<p><!-- [ASSET: gone] --></p>")])
    func missingAssets(policy: MissingAssetPolicy, expected: String) throws {
        let expander = try PlaceholderExpander(markup: AssetMarkup(), missing: policy)
        let result = expander.expand("<p><!-- [ASSET: gone] --></p>") { _ in nil }
        #expect(result.html == expected)
        #expect(result.missingIDs == ["gone"])
    }

    @Test func urlsArePercentEncodedAndAttributeSafe() {
        #expect(HTMLText.urlPath("my photo's #1.jpg") == "my%20photo%27s%20%231.jpg")
        #expect(HTMLText.attribute(HTMLText.urlPath("a&b.jpg")) == "a&amp;b.jpg")
        #expect(relativePath(from: "/out/site", to: "/src/issue/a.jpg") == "../../src/issue/a.jpg")
        #expect(relativePath(from: "/src", to: "/src/issue/a.jpg") == "issue/a.jpg")
    }
}

/// A figure expanded inside a paragraph leaves it: HTML5 closes a `<p>` at a `<figure>`.
@Suite struct LiftingFiguresTests {
    static let figure = "<figure><img src=\"a.jpg\"><figcaption>A</figcaption></figure>"

    @Test(arguments: [
        // Alone in its paragraph: the paragraph goes.
        ("<p>\n\(figure)\n</p>", "\(figure)\n"),
        // Mid-text: the paragraph ends before it and starts again, attributes kept, after it.
        ("<p class=\"x\">Before \(figure) after.</p>", "<p class=\"x\">Before</p>\n\(figure) <p class=\"x\">after.</p>"),
        // At the end of the text: nothing reopened.
        ("<p>Before\n\(figure)\n</p><p>Next</p>", "<p>Before</p>\n\(figure)\n<p>Next</p>"),
        // Two in one paragraph.
        ("<p>A \(figure) B \(figure) C</p>", "<p>A</p>\n\(figure) <p>B</p>\n\(figure) <p>C</p>"),
        // Outside paragraphs, and <pre>/<picture> are not paragraphs: untouched.
        ("<div>\(figure)</div><pre>x</pre>", "<div>\(figure)</div><pre>x</pre>"),
    ])
    func figuresLeaveTheirParagraph(html: String, lifted: String) {
        #expect(Renderer.liftingFigures(html) == lifted)
    }
}
