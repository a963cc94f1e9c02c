import GRDB
import Testing
@testable import GalleyCore
@testable import GalleyStore

/// The rows an import binds by position (`PositionalInsert`) must be the rows GRDB's `Codable`
/// encoding would write: the same columns, the same values. A column added to a row and not to
/// its `insertColumns` (or in another order) fails here.
@Suite struct StoreRowsTests {
    /// Each column of `row` (but `id`) with the value bound for it, next to GRDB's own encoding.
    static func check<Row: PositionalInsert & EncodableRecord>(_ row: Row) throws {
        var encoded = try row.databaseDictionary
        encoded["id"] = nil
        #expect(Row.insertColumns.count == row.insertValues.count)
        #expect(Set(Row.insertColumns) == Set(encoded.keys), "\(Row.databaseTableName): columns differ from the Codable ones")
        for (column, value) in zip(Row.insertColumns, row.insertValues) {
            #expect((value?.databaseValue ?? .null) == encoded[column], "\(Row.databaseTableName).\(column)")
        }
        // Every value tells one column from another (no two bound the same): the check above
        // would miss two columns swapped if their values were equal.
        let values = row.insertValues.map { $0?.databaseValue ?? .null }.filter { !$0.isNull }
        #expect(Set(values).count == values.count, "\(Row.databaseTableName): make the example's values distinct")
    }

    @Test func anArticleRowBindsItsCodableColumnsInOrder() throws {
        var article = ArticleRecord(globalID: "5f827f80262d6fe87d41ca17", title: "Night ferry", body: "<p>Boarding.</p>",
                                    dateLastUpdated: "2026-01-02T03:04:05.678Z")
        (article.description, article.url, article.section, article.authorName) = ("desc", "https://example.com/a", "Harbour", "Ann")
        (article.source, article.dek, article.authorURL, article.authorBio) = ("src", "A dek", "https://example.com/ann", "Ann writes.")
        (article.keywords, article.commentary, article.type, article.sku) = ("ferry,night", "comment", "feature", "sku-1")
        (article.published, article.featured) = (true, false)
        article.customMeta = .object([("mood", .string("calm"))])
        try Self.check(ArticleRow(article, issue: 41, placement: 7, writer: JSONWriter(pretty: false)))
    }

    @Test func anAssetRowBindsItsCodableColumnsInOrder() throws {
        let asset = AssetRecord(id: "ddbf0ad000e0695719452b4a", kind: .image, caption: "The deck", source: "Photo: Bo",
                                fileName: "deck.png", crop350: "deck-350.png", metadata: .object([("alt", .string("a deck"))]))
        var row = AssetRow(asset, issue: 41, article: nil, placement: 3, writer: JSONWriter(pretty: false))
        row.articleId = 42
        try Self.check(row)
        // An issue's own image: no article, no metadata (NULL in both encodings).
        var bare = asset
        bare.metadata = nil
        let issueImage = AssetRow(bare, issue: 41, article: nil, placement: 1, writer: JSONWriter(pretty: false))
        var encoded = try issueImage.databaseDictionary
        encoded["id"] = nil
        for (column, value) in zip(AssetRow.insertColumns, issueImage.insertValues) {
            #expect((value?.databaseValue ?? .null) == encoded[column], "asset.\(column)")
        }
    }

    @Test func aFileRowBindsItsCodableColumnsInOrder() throws {
        try Self.check(FileRow(id: nil, issueId: 41, name: "com.example/latest.json", size: 1234,
                               sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
    }

    @Test func theStatementNamesEveryColumnWithOnePlaceholderEach() {
        let sql = FileRow.insertSQL(orIgnore: true)
        #expect(sql == #"INSERT OR IGNORE INTO "file" ("issueId", "name", "size", "sha256") VALUES (?, ?, ?, ?)"#)
        #expect(!ArticleRow.insertSQL(orIgnore: false).contains("OR IGNORE"))
    }
}
