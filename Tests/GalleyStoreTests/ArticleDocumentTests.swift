import Foundation
import Testing
@testable import GalleyCore
@testable import GalleyStore
@testable import GalleyStorePostgres
@testable import GalleyStoreSQLite

/// An article's document written as its neighbours are read (`ArticleDetail.writeDocument`,
/// behind `IssueStore.writeArticleDocument`): the same bytes as the detail encoded whole, and a
/// read that fails part way ends the document with the error rather than cutting it short.
/// (The store conformance tests hold it equal on real stores.)
@Suite struct ArticleDocumentTests {
    struct Stop: Error {}

    static func article(_ number: Int) -> StoredArticle {
        StoredArticle(globalID: "article-\(number)", issueGlobalID: "issue", placement: number, title: "Article \(number)", dek: "",
                      section: "", type: "article", author: "", date: "2026-01-0\(number)T10:00:00Z", featured: false, keywords: "a, b")
    }

    static let detail = ArticleDetail(
        article: article(5), body: "<p>Body</p>", description: "", url: "https://example.com/a", authorURL: "", authorBio: "",
        sku: nil, published: true, customMeta: JSONValueBox(.object([])), assets: [], newer: [], older: [])

    /// What a store hands over for `newer` and `older`, stopping with `Stop` after `stopAfter`
    /// neighbours (or before `begin` when it is -1).
    static func read(newer: [StoredArticle], older: [StoredArticle], stopAfter: Int? = nil)
        -> (_ begin: (ArticleDetail) throws -> Void, _ neighbour: (ArticleNeighbour, StoredArticle) throws -> Void) throws -> Void {
        { begin, neighbour in
            if stopAfter == -1 { throw Stop() }
            try begin(detail)
            let all = newer.map { (ArticleNeighbour.newer, $0) } + older.map { (ArticleNeighbour.older, $0) }
            for (index, (side, article)) in all.enumerated() {
                if index == stopAfter { throw GalleyError("the store went away", id: .storeFailed) }
                try neighbour(side, article)
            }
        }
    }

    @Test(arguments: [(0, 0), (2, 0), (0, 3), (1, 2)])
    func itIsTheDetailEncodedWhole(newerCount: Int, olderCount: Int) throws {
        let newer = (1...4).prefix(newerCount).map(Self.article), older = (6...9).prefix(olderCount).map(Self.article)
        var whole = Self.detail
        (whole.newer, whole.older) = (newer, older)
        var pieces: [String] = []
        try ArticleDetail.writeDocument(adjust: { _ in }, write: { pieces.append($0) }, read: Self.read(newer: newer, older: older))
        #expect(pieces.joined() == JSONDocument.encode(whole))
    }

    @Test func adjustChangesWhatIsWritten() throws {
        var written = ""
        try ArticleDetail.writeDocument(adjust: { $0.url = "changed" }, write: { written += $0 }, read: Self.read(newer: [], older: []))
        #expect(written.contains("\"url\" : \"changed\""))
    }

    @Test func aReadThatFailsBeforeTheArticleWritesNothing() {
        var written = ""
        #expect(throws: Stop.self) {
            try ArticleDetail.writeDocument(adjust: { _ in }, write: { written += $0 }, read: Self.read(newer: [], older: [], stopAfter: -1))
        }
        #expect(written.isEmpty)
    }

    @Test(arguments: [1, 2])
    func aReadThatFailsPartWayEndsTheDocumentWithTheError(stopAfter: Int) throws {
        var written = ""
        do {
            try ArticleDetail.writeDocument(adjust: { _ in }, write: { written += $0 },
                                            read: Self.read(newer: [Self.article(1), Self.article(2)], older: [Self.article(7)], stopAfter: stopAfter))
            Issue.record("a failed read was not reported")
        } catch let ended as JSONDocument.ListEndedByError {
            #expect(ended.error.id == .storeFailed)
        }
        let document = try #require(try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String: Any])
        #expect((document["error"] as? [String: Any])?["id"] as? String == "store.failed")
        #expect((document["newer"] as? [Any])?.count == min(stopAfter, 2))
        // The members after the lists are still there, and the document is whole.
        #expect(document["url"] as? String == "https://example.com/a" && document["schema_version"] as? Int == 1)
    }
}
