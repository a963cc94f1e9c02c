import Foundation
import Testing
import GalleyCore
@testable import GalleyFormats

/// RSS and Atom read into the one JSON shape key maps read (XMLFeed), from the shipped samples
/// and from the feeds that break naive readers.
@Suite struct XMLFeedTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Examples/key-maps")

    func read(_ xml: String, address: String = "https://feeds.example.com/feed.xml") throws -> JSONValue {
        try XMLFeed.document(Array(xml.utf8), address: address)
    }

    func items(_ document: JSONValue) -> [JSONValue] {
        if case .array(let list)? = document["items"] { return list }
        return []
    }

    @Test func rssGivesEntitiesCDATALinksNamespacesAndMedia() throws {
        let data = try Data(contentsOf: Self.examples.appending(path: "rss.sample.xml"))
        #expect(XMLFeed.looksLikeXML(data))
        let document = try XMLFeed.document(Array(data), address: "https://news.example.com/feed.xml")
        #expect(document["format"] == .string("rss"))
        #expect(document["title"] == .string("The Harbour Review \u{2013} News"))
        let list = items(document)
        #expect(list.count == 3)
        let first = list[0]
        #expect(first["id"] == .string("news-1042"))
        #expect(first["title"] == .string("The quay\u{2019}s new caf\u{E9} opens"))
        #expect(first["link"] == .string("https://news.example.com/2026/01/cafe-opens/"), "relative to the channel's link")
        #expect(first["author"] == .string("Ann Marr"))
        #expect(first["categories"] == .array([.string("Harbour"), .string("Food & drink")]))
        #expect(first["content"]?.stringValue?.hasPrefix("<p>The caf&eacute; on the quay") == true, "content:encoded, CDATA undone")
        #expect(first["media"] == .array([.object([("url", .string("https://news.example.com/img/cafe.jpg")), ("type", .string("image/jpeg"))])]))
        #expect(list[1]["media"] == .array([.object([("url", .string("https://news.example.com/audio/timetable.mp3")), ("type", .string("audio/mpeg"))])]))
        #expect(list[1]["summary"] == .string("Ferries leave every hour <b>from 7 until 19</b>."), "escaped markup is markup")
        #expect(list[2]["date"] == .null && list[2]["link"] == .null, "a missing date is null, not a guess")
    }

    @Test func atomGivesTextConstructsBasesAndAuthors() throws {
        let data = try Data(contentsOf: Self.examples.appending(path: "atom.sample.xml"))
        let list = items(try XMLFeed.document(Array(data), address: "https://blog.example.org/feed.atom"))
        #expect(list.count == 2)
        #expect(list[0]["title"] == .string("Spring tides <em>this week</em>"))
        #expect(list[0]["link"] == .string("https://blog.example.org/posts/spring-tides"), "xml:base")
        #expect(list[0]["content"] == .string("<p>High water at <strong>07:12</strong>.</p>"), "xhtml: the markup inside its div")
        #expect(list[0]["date"] == .string("2026-01-15T09:00:00+01:00") && list[0]["author"] == .string("Harbour Office"))
        #expect(list[0]["media"] == .array([.object([("url", .string("https://blog.example.org/files/tides.pdf")), ("type", .string("application/pdf"))])]))
        #expect(list[1]["date"] == .string("2026-01-10T08:00:00Z"), "updated when there is no published")
        #expect(list[1]["author"] == .string("Regatta Committee"))
    }

    @Test func rss1AndOtherEncodingsAreRead() throws {
        let rdf = """
            <?xml version="1.0"?>
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
              <channel rdf:about="https://x.example/"><title>X</title><link>https://x.example/</link></channel>
              <item rdf:about="https://x.example/1"><title>One</title><link>https://x.example/1</link><dc:date>2026-01-02T03:04:05Z</dc:date></item>
            </rdf:RDF>
            """
        let item = try #require(items(try read(rdf)).first)
        #expect(item["title"] == .string("One") && item["date"] == .string("2026-01-02T03:04:05Z"))
        var latin = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><rss><channel><item><title>Caf".utf8)
        latin += [0xE9] + Array("</title><guid>c</guid></item></channel></rss>".utf8)
        #expect(items(try XMLFeed.document(latin, address: "https://x.example/")).first?["title"] == .string("Caf\u{E9}"))
    }

    @Test(arguments: [
        // An entity that expands into itself a billion times (libxml2 or the declaration rule
        // stops it), and one that reads a file.
        ("<?xml version=\"1.0\"?><!DOCTYPE rss [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]><rss><channel><item><title>&c;</title></item></channel></rss>", "entit"),
        ("<?xml version=\"1.0\"?><!DOCTYPE rss [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><rss><channel><item><title>&x;</title></item></channel></rss>", "declares XML entities"),
        ("<rss><channel><item><title>open", "not well-formed XML"),
        ("<html><body>Not a feed</body></html>", "neither RSS nor Atom"),
    ])
    func hostileOrWrongXMLIsRefusedWithWhy(_ xml: String, _ said: String) throws {
        let error = try #require(throws: GalleyError.self) { try read(xml) }
        #expect(error.id == .feedInvalid && error.message.contains(said), "\(error.message)")
    }

    @Test func onlyWebLinksAreKept() {
        #expect(XMLFeed.absolute("javascript:alert(1)", against: "https://x.example/") == nil)
        #expect(XMLFeed.absolute("../a", against: "https://x.example/b/c/feed") == "https://x.example/b/a")
        #expect(XMLFeed.looksLikeXML(Array("\u{FEFF}  \n<rss>".utf8)) && !XMLFeed.looksLikeXML(Array(" [{}]".utf8)))
    }
}
