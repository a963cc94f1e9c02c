import Foundation
import Testing
@testable import GalleyCore
@testable import GalleyFormats

/// Key maps' text rules: `html: text` takes an HTML value's text (entities decoded, markup and
/// code gone), only on text fields; every body is sanitized on its way in.
@Suite struct KeyMapTests {
    @Test(arguments: [
        ("The quay&#8217;s new caf&eacute;", "The quay’s new café"),
        ("Tide &amp; time &lt;table&gt;", "Tide & time <table>"),
        ("<p>Two</p><p>paragraphs</p>\n", "Two paragraphs"),
        ("<ul><li>one</li><li>two</li></ul><div>three</div>four", "one two three four"),
        ("A <script>alert(1)</script>title", "A title"),
        ("plain,   with  spaces ", "plain, with spaces"),
        ("&#x1F600; &nosuch;", "😀 &nosuch;"),
    ])
    func htmlTextIsWhatAReaderSees(html: String, text: String) {
        #expect(HTMLParsing.plainText(html) == text)
    }

    static func map(_ article: String) throws -> KeyMap {
        try KeyMap(yaml: "galley_key_map: 1\nitems: \"\"\narticle:\n  global_id: { from: /id }\n" + article, path: "map.yaml")
    }

    @Test func onlyTextFieldsTakeHTMLText() throws {
        let map = try Self.map("  title: { from: /t, html: text }\n  body: { from: /b }\n")
        let document = try #require(JSONValue(parsing: #"[{"id": 1, "t": "Caf&eacute; <b>news</b>", "b": "<p onclick=\"x()\">Hi</p>"}]"#))
        let result = try map.map(document, source: "feed.json")
        #expect(result.articles.first?.title == "Café news")
        #expect(result.articles.first?.body == "<p>Hi</p>")
        #expect(result.sanitized.first?.removed == ["onclick on <p>"])
        let refusals = [
            ("  title: { from: /t }\n  body: { from: /x, html: text }\n", "is for text fields"),
            ("  title: { from: /t }\n  url: { from: /x, html: text }\n", "is for text fields"),
            ("  title: { from: /t, html: markup }\n", "`html` takes `text`"),
        ]
        for (rules, why) in refusals {
            let error = #expect(throws: GalleyError.self, "\(rules)") { try Self.map(rules) }
            #expect(error?.message.contains(why) == true, "\(error?.message ?? "no error")")
            #expect(error?.path?.hasPrefix("map.yaml:") == true, "the error names the line: \(error?.path ?? "")")
        }
    }
}
