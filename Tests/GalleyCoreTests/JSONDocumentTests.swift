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

    // MARK: Writing a whole document in pieces

    struct Nested: Encodable {
        struct Inner: Encodable {
            var names: [String]
            var empty: [Int] = []
            @JSONNullable var note: String?
            var table: [String: [Int]]
        }
        var count = 3
        var ratio = 0.1 + 0.2
        var path = "a/b/ü \"quoted\"\n"
        var flag = true
        var missing: Int? = nil
        var items: [Inner]
        var groups: [[Int]] = [[1, 2], [], [3]]
        var maybe: [String?] = ["x", nil]
        var set: Set<Int> = [5]
        var emptyTable: [String: Int] = [:]
        var pairs: [Int: String] = [2: "b", 10: "a"]
        @JSONNullable var nothing: Int?
        @JSONNullable var wrappedItems: [Int]?
        enum CodingKeys: String, CodingKey {
            case count, ratio, path, flag, missing, items, groups, maybe, set, pairs, nothing
            case emptyTable = "empty_table"
            case wrappedItems = "wrapped_items"
        }
    }

    /// A value made by hand with nested containers, which the writer does not follow.
    struct HandMade: Encodable {
        enum Keys: String, CodingKey { case outer, inner }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .outer)
            try nested.encode([1, 2], forKey: .inner)
        }
    }

    struct Report: Encodable {
        var inputs: [Nested]
        var hand = HandMade()
        var warnings: [Diagnostic]
    }

    static func document(items: Int) -> Report {
        let inner = (0..<items).map { n in
            Nested.Inner(names: (0..<n).map { "name \($0)" }, note: n % 2 == 0 ? nil : "odd", table: n == 0 ? [:] : ["k\(n)": [n], "a": []])
        }
        var nested = Nested(items: inner)
        nested.wrappedItems = items == 0 ? nil : Array(0..<items)
        let warnings = (0..<items).map { n in
            Diagnostic(.mediaSVGMalformed, "warning \(n) in `a/b.svg`", at: SourceLocation(path: "a/b.svg", line: n == 1 ? nil : n), hint: n == 2 ? nil : "Fix it.")
        }
        return Report(inputs: items == 0 ? [] : [nested, Nested(items: [])], warnings: warnings)
    }

    /// The pieces make the bytes `encode` makes, for objects, lists (empty, nested, of
    /// optionals), dictionaries, sets, property wrappers, values made by hand and findings;
    /// every piece but the last is at least 64 KB.
    @Test(arguments: [0, 1, 3, 40])
    func writingInPiecesGivesTheBytesOfEncode(items: Int) {
        let document = Self.document(items: items)
        var pieces: [String] = []
        JSONDocument.write(document) { pieces.append($0) }
        #expect(pieces.joined() == JSONDocument.encode(document))
        #expect(pieces.dropLast().allSatisfy { $0.utf8.count >= 1 << 16 })
    }

    @Test func aLongListGoesOutInPiecesOfAboutSixtyFourKilobytes() {
        struct Summary: Encodable { var path = "out"; var warnings: [Diagnostic] }
        let summary = Summary(warnings: (0..<3_000).map {
            Diagnostic(.mediaSVGMalformed, "picture \($0) cannot be read", at: SourceLocation(path: "articles/\($0)/a.jpg", line: 4), hint: "Check it.")
        })
        var pieces: [String] = []
        JSONDocument.write(summary) { pieces.append($0) }
        #expect(pieces.count > 5, "\(pieces.count) pieces")
        #expect(pieces.allSatisfy { $0.utf8.count < (1 << 16) + 4_096 })
        #expect(pieces.joined() == JSONDocument.encode(summary))
    }
}
