import Foundation
import GRDB
import Testing
@testable import GalleyCore
@testable import GalleyStore
@testable import GalleyStoreSQLite
import GalleyTestSupport

/// A new store gets its schema from one script (`StoreSchema.current`) instead of replaying
/// every migration: the script must leave exactly what the migrations leave, or stores made
/// new and stores made by an older Galley would differ.
struct StoreSchemaTests {
    /// Everything of a database's schema that a query or a later migration can tell apart:
    /// every table, index, trigger and view with its SQL, the migrations marked as done, and
    /// the rows the schema itself holds (the revision, the search index's configuration).
    static func schema(_ database: DatabasePool) throws -> [String] {
        try database.read { db in
            var lines = try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").map {
                "\($0["type"] as String) \($0["name"] as String) on \($0["tbl_name"] as String): \(($0["sql"] as String?) ?? "-")"
            }
            lines += try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier").map { "migrated \($0)" }
            lines += try Row.fetchAll(db, sql: "SELECT id, value FROM storeRevision").map { "revision \($0)" }
            lines += try Row.fetchAll(db, sql: "SELECT k, v FROM articleSearch_config ORDER BY k").map { "search config \($0)" }
            lines.append("page size \(try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0)")
            lines.append("search text version \(try SearchText.indexedVersion(db))")
            return lines
        }
    }

    static func pool(_ folder: URL, _ name: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA page_size = 16384")
            SearchText.register(db)
        }
        return try DatabasePool(path: folder.appending(path: "\(name).sqlite").path, configuration: configuration)
    }

    @Test func theNewStoreScriptLeavesWhatTheMigrationsLeave() throws {
        let folder = try Scratch.folder("galley-schema")
        let replayed = try Self.pool(folder, "replayed")
        try StoreSchema.migrator().migrate(replayed)
        let scripted = try Self.pool(folder, "scripted")
        try StoreSchema.migrate(scripted)

        let expected = try Self.schema(replayed)
        #expect(expected.count > 40, "\(expected)")
        #expect(try Self.schema(scripted) == expected)
        // Every migration the script stands for is one the migrator knows, so none runs again.
        #expect(try scripted.read { db in try StoreSchema.migrator().hasCompletedMigrations(db) })
        // The script stands for v1 to v12 (one added later runs after it).
        #expect(StoreSchema.currentIdentifiers.first == "v1: issues, articles, assets, search")
        #expect(StoreSchema.currentIdentifiers.last == "v12: search index without a copy")
    }

    /// The index splits text with the tokenizer queries are split with (`SearchText.tokenizer`):
    /// its SQL, spelled by hand for the script, says what GRDB says for that tokenizer.
    @Test func theIndexIsMadeWithTheQueriesTokenizer() throws {
        let pool = try Self.pool(try Scratch.folder("galley-schema-tokenizer"), "probe")
        try StoreSchema.migrate(pool)
        let (made, expected) = try pool.write { db -> (String?, String?) in
            try db.create(virtualTable: "probe", using: FTS5()) { t in
                t.tokenizer = SearchText.tokenizer
                t.column("x")
            }
            // The table's `tokenize=` argument, its last.
            func tokenize(_ table: String) throws -> String? {
                guard let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = ?", arguments: [table]),
                      let start = sql.range(of: "tokenize=") else { return nil }
                return String(sql[start.lowerBound...])
            }
            return (try tokenize("articleSearch"), try tokenize("probe"))
        }
        #expect(made != nil && made == expected, "\(made ?? "-") against \(expected ?? "-")")
    }

    /// A database that is not empty (a store made by an older Galley) gets the migrations it
    /// lacks, never the script.
    @Test func anOlderStoreIsMigratedNotScripted() throws {
        let folder = try Scratch.folder("galley-schema-old")
        let replayed = try Self.pool(folder, "replayed")
        try StoreSchema.migrator().migrate(replayed)
        let old = try Self.pool(folder, "old")
        try StoreSchema.migrator().migrate(old, upTo: "v6: packages")
        try StoreSchema.migrate(old)
        #expect(try Self.schema(old) == Self.schema(replayed))
    }

    /// The script as a whole store uses it: made new, the store imports, searches and counts
    /// its revision as one made by the migrations would.
    @Test func aStoreMadeByTheScriptWorks() throws {
        let folder = try Scratch.folder("galley-schema-store")
        let store = try SQLiteStore(at: folder.appending(path: "store"))
        let revision = try store.revision()
        let example = TestFiles.fixtures.appending(path: "zips/example-valid.zip").path
        let result = try store.importZip(example, force: false)
        #expect(try store.revision() > revision)
        #expect(try store.issues().map(\.appleID) == [result.appleID])
        #expect(try store.search("title").articles.map(\.title) == ["Title"])
    }
}
