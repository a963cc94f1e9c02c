import GRDB
import Testing
@testable import GalleyCore
@testable import GalleyStore
@testable import GalleyStoreSQLite

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
            #expect(value == encoded[column], "\(Row.databaseTableName).\(column)")
        }
        // Every value tells one column from another (no two bound the same): the check above
        // would miss two columns swapped if their values were equal.
        let values = row.insertValues.filter { !$0.isNull }
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
            #expect(value == encoded[column], "asset.\(column)")
        }
    }

    @Test func aFileRowBindsItsCodableColumnsInOrder() throws {
        try Self.check(FileRow(id: nil, issueId: 41, name: "com.example/latest.json", size: 1234,
                               sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
    }

    /// `executeBinding` runs a cached statement again and again, each time with its own values,
    /// as GRDB's `execute(arguments:)` would: the rows read back are the rows written.
    @Test func rowsBoundThroughSQLiteReadBackAsGRDBWritesThem() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE file (id INTEGER PRIMARY KEY, issueId INTEGER NOT NULL, name TEXT NOT NULL UNIQUE, size INTEGER, sha256 TEXT)")
            let insert = try db.cachedStatement(sql: FileRow.insertSQL(orIgnore: false))
            let rows = [
                FileRow(id: nil, issueId: 41, name: "a/latest.json", size: 1234, sha256: String(repeating: "ab", count: 32)),
                FileRow(id: nil, issueId: 41, name: "a/Café ☕.jpg", size: 0, sha256: ""),
                FileRow(id: nil, issueId: 42, name: "b/" + String(repeating: "x", count: 100_000), size: Int64.max, sha256: "e3"),
            ]
            for row in rows { try row.insert(with: insert) }
            let read = try FileRow.order(Column("id")).fetchAll(db)
            #expect(read.map(\.name) == rows.map(\.name))
            #expect(read.map(\.size) == rows.map(\.size))
            #expect(read.map(\.sha256) == rows.map(\.sha256))
            #expect(read.map(\.issueId) == rows.map(\.issueId))
            // A NULL binds as NULL, not as the previous run's value.
            let nullable = try db.cachedStatement(sql: "INSERT INTO file (issueId, name, size, sha256) VALUES (?, ?, ?, ?)")
            try nullable.executeBinding([7.databaseValue, "n".databaseValue, .null, .null])
            let row = try Row.fetchOne(db, sql: "SELECT size, sha256 FROM file WHERE name = 'n'")
            #expect(row?["size"] == nil as Int64?)
            #expect(row?["sha256"] == nil as String?)
        }
    }

    /// A failing run throws SQLite's error with the statement, leaves nothing, and the statement
    /// runs again afterwards; values that do not fit the placeholders are refused before it runs.
    @Test func aRowBoundThroughSQLiteThatFailsThrowsAndTheStatementRunsAgain() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE file (id INTEGER PRIMARY KEY, issueId INTEGER NOT NULL, name TEXT NOT NULL UNIQUE, size INTEGER, sha256 TEXT)")
            let insert = try db.cachedStatement(sql: FileRow.insertSQL(orIgnore: false))
            let row = FileRow(id: nil, issueId: 1, name: "a/x.jpg", size: 3, sha256: "s")
            try row.insert(with: insert)
            do {
                try row.insert(with: insert)
                Issue.record("a second row of the same name was written")
            } catch let error as DatabaseError {
                #expect(error.resultCode == .SQLITE_CONSTRAINT)
                #expect(error.sql == FileRow.insertSQL(orIgnore: false))
            }
            #expect(throws: DatabaseError.self) { try insert.executeBinding([1.databaseValue]) }
            try FileRow(id: nil, issueId: 1, name: "a/y.jpg", size: 4, sha256: "t").insert(with: insert)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM file") == 2)
        }
    }

    @Test func theStatementNamesEveryColumnWithOnePlaceholderEach() {
        let sql = FileRow.insertSQL(orIgnore: true)
        #expect(sql == #"INSERT OR IGNORE INTO "file" ("issueId", "name", "size", "sha256") VALUES (?, ?, ?, ?)"#)
        #expect(!ArticleRow.insertSQL(orIgnore: false).contains("OR IGNORE"))
    }
}
