import Foundation
import Testing
@testable import GalleyCore

/// `JSONDocument.streamList` writes, piece by piece, the bytes `encode` makes of the whole list.
struct JSONDocumentTests {
    struct Item: Encodable {
        var name: String
        var path: String
        var note: String?
        var nested: [String: [Int]]
    }

    struct Listing: Encodable { var assets: [Item] }
    /// `issue show`'s document: the list, then members whose keys sort after it.
    struct WithIssue: Encodable {
        var articles: [Item]
        var issue: Item
        var notes: [String: Int]
    }
    /// `serve`'s key, which sorts after `error`.
    struct Items: Encodable { var items: [Item] }

    static let items = [
        Item(name: "a", path: "/x/y.jpg", note: nil, nested: [:]),
        Item(name: "line\nbreak \"quoted\" é 👩‍👧 \\ /", path: "", note: "tab\there", nested: ["b": [1, 2], "a": []]),
        Item(name: "", path: "issues/z.mp4", note: "", nested: ["k": [3]]),
    ]

    static func streamed(
        _ items: [Item], key: String = "assets", trailing: [(key: String, value: any Encodable)] = [], failingAfter: Int? = nil
    ) throws -> (pieces: [String], error: (any Error)?) {
        struct Failed: Error {}
        var pieces: [String] = []
        // The trailing members are asked for once the list has ended, so the list may learn them.
        var ended = false
        do {
            try JSONDocument.streamList(key: key, trailing: { #expect(ended); return trailing }, write: { pieces.append($0) }) {
                (send: (Item) throws -> Void) in
                defer { ended = true }
                for (number, item) in items.enumerated() {
                    if number == failingAfter { throw Failed() }
                    try send(item)
                }
            }
        } catch {
            return (pieces, error)
        }
        return (pieces, nil)
    }

    @Test(arguments: 0...3)
    func aStreamedListIsTheDocumentOfTheWholeList(count: Int) throws {
        let items = Array(Self.items.prefix(count))
        let (pieces, error) = try Self.streamed(items)
        #expect(error == nil)
        #expect(pieces.joined() == JSONDocument.encode(Listing(assets: items)))
        // One piece an item (the first with the document's opening), the list's end and the
        // document's end: never the whole list in one piece.
        #expect(pieces.count == count + 2)
        let (itemPieces, itemError) = try Self.streamed(items, key: "items")
        #expect(itemError == nil)
        #expect(itemPieces.joined() == JSONDocument.encode(Items(items: items)))
    }

    /// Members after the list (`issue show`'s `issue`), given once it has ended, are written as
    /// `encode` writes them: the same bytes as the whole document's, empty objects included.
    @Test(arguments: 0...3)
    func membersAfterTheListAreTheWholeDocumentsToo(count: Int) throws {
        let items = Array(Self.items.prefix(count))
        let issue = Self.items[1]
        let (pieces, error) = try Self.streamed(items, key: "articles", trailing: [("issue", issue), ("notes", [String: Int]())])
        #expect(error == nil)
        #expect(pieces.joined() == JSONDocument.encode(WithIssue(articles: items, issue: issue, notes: [:])))
    }

    @Test func anErrorAfterTheFirstItemComesBeforeTheMembersAfterTheList() throws {
        let (pieces, error) = try Self.streamed(Self.items, key: "articles", trailing: [("issue", Self.items[0])], failingAfter: 1)
        #expect(error is JSONDocument.ListEndedByError)
        let text = pieces.joined()
        let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect((document["articles"] as? [Any])?.count == 1)
        #expect((document["issue"] as? [String: Any])?["path"] as? String == "/x/y.jpg")
        // The keys in sorted order, as every document has them.
        let order = ["\"articles\"", "\"error\"", "\"issue\"", "\"schema_version\""].compactMap { text.range(of: $0)?.lowerBound }
        #expect(order.count == 4 && order == order.sorted())
    }

    @Test func anErrorBeforeTheFirstItemWritesNothing() throws {
        let (pieces, error) = try Self.streamed(Self.items, failingAfter: 0)
        #expect(error != nil && !(error is JSONDocument.ListEndedByError))
        #expect(pieces.isEmpty)
    }

    /// After the first item, an error still ends one document: the items written, then the
    /// error beside them, as an error document carries it.
    @Test func anErrorAfterTheFirstItemEndsTheDocumentWithIt() throws {
        let (pieces, error) = try Self.streamed(Self.items, failingAfter: 2)
        let ended = try #require(error as? JSONDocument.ListEndedByError)
        #expect(ended.error.message.contains("Failed"))
        let document = try #require(try JSONSerialization.jsonObject(with: Data(pieces.joined().utf8)) as? [String: Any])
        #expect((document["assets"] as? [Any])?.count == 2)
        #expect(document["schema_version"] as? Int == 1)
        let body = try #require(document["error"] as? [String: Any])
        #expect(body["id"] as? String == ErrorID.failed.rawValue)
        #expect(Set(body.keys) == ["id", "message", "path", "hint"])
        // Laid out as `encode` lays out an error document's body, one level in.
        let whole = JSONDocument.encode(ErrorDocument(ended.error))
        let errorLines = whole.split(separator: "\n").filter { $0.hasPrefix("    ") || $0 == "  }," || $0.hasPrefix("  \"error\"") }
        for line in errorLines { #expect(pieces.joined().contains(line + "\n"), "\(line)") }
    }

    /// A document with values before and after `schema_version`, lists of 0 to 3 items and a
    /// null: `ObjectWriter` writes, piece by piece, what `encode` makes of the whole.
    struct Detail: Encodable {
        var article: Item
        var body: String
        var newer: [Item]
        var older: [Item]
        var published: Bool
        @JSONNullable var sku: String?
        var url: String

        func write(_ writer: JSONDocument.ObjectWriter) throws {
            writer.value("article", article)
            writer.value("body", body)
            for (key, list) in [("newer", newer), ("older", older)] {
                writer.beginList(key)
                for item in list { try writer.item(item) }
                writer.endList()
            }
            writer.value("published", published)
            writer.value("sku", _sku)
            writer.value("url", url)
            writer.finish()
        }
    }

    @Test(arguments: 0...3)
    func objectWriterWritesTheBytesEncodeMakes(count: Int) throws {
        for sku in [nil, "SKU-1"] {
            let detail = Detail(article: Self.items[1], body: "<p>a/b</p>\n", newer: Array(Self.items.prefix(count)),
                                older: Array(Self.items.suffix(3 - count)), published: count % 2 == 0, sku: sku, url: "https://x.example/a")
            var pieces: [String] = []
            try detail.write(JSONDocument.ObjectWriter { pieces.append($0) })
            #expect(pieces.joined() == JSONDocument.encode(detail))
            // A piece a value, an item, a list's end and the document's end: 3 items, 2 lists, 5 values.
            #expect(pieces.count == 3 + 2 + 5 + 1)
        }
    }
}
