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

    static let items = [
        Item(name: "a", path: "/x/y.jpg", note: nil, nested: [:]),
        Item(name: "line\nbreak \"quoted\" é 👩‍👧 \\ /", path: "", note: "tab\there", nested: ["b": [1, 2], "a": []]),
        Item(name: "", path: "issues/z.mp4", note: "", nested: ["k": [3]]),
    ]

    static func streamed(_ items: [Item], failingAfter: Int? = nil) throws -> (pieces: [String], error: (any Error)?) {
        struct Failed: Error {}
        var pieces: [String] = []
        do {
            try JSONDocument.streamList(key: "assets", write: { pieces.append($0) }) { (send: (Item) throws -> Void) in
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
        // One piece an item, and the end (or, for none, the whole empty document).
        #expect(pieces.count == max(count + 1, 1))
    }

    @Test func anErrorBeforeTheFirstItemWritesNothing() throws {
        let (pieces, error) = try Self.streamed(Self.items, failingAfter: 0)
        #expect(error != nil)
        #expect(pieces.isEmpty)
        let (some, later) = try Self.streamed(Self.items, failingAfter: 2)
        #expect(later != nil)
        #expect(some.count == 2, "the document is left unfinished")
    }
}
