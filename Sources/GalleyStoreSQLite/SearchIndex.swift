import GRDB
import GalleyCore
import GalleyStore

/// The search index's SQLite side: its tokenizer, the SQL functions its view reads the text
/// through, and its rebuilds. The text itself is `SearchText`'s, shared with every backend.
extension SearchText {
    static let tokenizer = FTS5TokenizerDescriptor.unicode61(diacritics: .remove, tokenCharacters: ["'"])

    /// The version of the text `field` and `body` make. The index keeps no copy of that text
    /// (migration v12): FTS5 reads it back through `articleSearchSource`, which makes it from the
    /// article's row with these two functions, to take an article's words out of the index when
    /// the row goes. Should they make other text than when the article was indexed, other words
    /// would be taken out and the index would be corrupt; so a change to what they make bumps
    /// this, and a store indexed under another version is rebuilt when next opened
    /// (`StoreSchema.migrate`). `SearchTextTests` holds a digest of what they make at this version.
    static let version = 2

    /// `field` and `body` as SQL functions, for `articleSearchSource`: every connection to a
    /// store registers them (`register`). Deterministic, so SQLite may use them in a view.
    static let functions = [
        DatabaseFunction("galleySearchField", argumentCount: 1, pure: true) { values in
            field(values.first.flatMap { String.fromDatabaseValue($0) } ?? "")
        },
        DatabaseFunction("galleySearchBody", argumentCount: 1, pure: true) { values in
            body(values.first.flatMap { String.fromDatabaseValue($0) } ?? "")
        },
    ]

    static func register(_ db: Database) {
        for function in functions { db.add(function: function) }
    }

    /// The version the store's index was built under (SQLite's `user_version`, which nothing
    /// else in the store uses).
    static func indexedVersion(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
    }

    /// Builds the index again from the articles, under this version.
    static func rebuild(_ db: Database) throws {
        try db.execute(sql: "INSERT INTO articleSearch (articleSearch) VALUES ('rebuild')")
        try db.execute(sql: "PRAGMA user_version = \(version)")
    }

    /// `rebuild` if the index was built under another version (see `version`).
    static func rebuildIfChanged(_ db: Database) throws {
        if try indexedVersion(db) != version { try rebuild(db) }
    }

    /// How many articles the index holds that the store does not. FTS5 keeps a row of
    /// `articleSearch_docsize` for each article indexed; through the index itself such a row is
    /// invisible, its text coming from the articles. Only `rebuild` takes one out.
    static let orphansSQL = "SELECT COUNT(*) FROM articleSearch_docsize WHERE id NOT IN (SELECT id FROM article)"
    /// Adds an article to the search index: the row id, then `fields`.
    static let insertSQL = "INSERT INTO articleSearch (rowid, title, dek, keywords, body) VALUES (?, ?, ?, ?, ?)"

    /// An article's title, dek, keywords and body as the index holds them, in `insertSQL`'s order.
    static func fields(title: String, dek: String, keywords: String, body html: String) -> [String] {
        [field(title), field(dek), field(keywords), body(html)]
    }

    /// `insertSQL`'s values, for `Statement.executeBinding`.
    static func values(_ rowID: Int64, _ fields: [String]) -> [DatabaseValue] {
        var values = [rowID.databaseValue]
        for field in fields { values.append(field.databaseValue) }
        return values
    }

    /// Adds an article to the search index, as the v4 migration's rebuild does (import makes
    /// `fields` on another thread).
    static func index(_ db: Database, rowID: Int64, title: String, dek: String, keywords: String, body html: String) throws {
        let insert = try db.cachedStatement(sql: insertSQL)
        try insert.executeBinding(values(rowID, fields(title: title, dek: dek, keywords: keywords, body: html)))
    }

    /// The full-text table: title, dek, keywords, body, split by `tokenizer` (migration v1's
    /// `unicode61`, v4's `SearchText.tokenizer`).
    static func createIndex(_ db: Database, tokenizer: FTS5TokenizerDescriptor) throws {
        try db.create(virtualTable: "articleSearch", using: FTS5()) { t in
            t.tokenizer = tokenizer
            t.column("title")
            t.column("dek")
            t.column("keywords")
            t.column("body")
        }
    }

}
