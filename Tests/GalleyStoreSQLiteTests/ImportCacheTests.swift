import Foundation
import GRDB
import Testing
@testable import GalleyCore
@testable import GalleyStore
@testable import GalleyStoreSQLite
import GalleyTestSupport

/// An import writes its rows with an 8 MiB page cache (`SQLiteStore.withImportCache`: the
/// random-id indexes otherwise go through the write-ahead log again and again) and gives the
/// writing connection SQLite's default back, whether the rows were written or refused: `serve`
/// keeps that connection for its later writes.
@Suite struct ImportCacheTests {
    static let fixtures = TestFiles.fixtures.appending(path: "zips")

    static func cacheSize(_ db: Database) throws -> Int { try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0 }

    @Test func theCacheIsLargerForTheRowsAndTheDefaultAfterwardsEvenWhenTheyFail() throws {
        let store = try SQLiteStore(at: try Scratch.folder("galley-cache").appending(path: "store"))
        let during = try store.write { db in try SQLiteStore.withImportCache(db) { try Self.cacheSize(db) } }
        #expect(during == -8192)
        #expect(try store.write { db in try Self.cacheSize(db) } == -2000)

        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try store.write { db in try SQLiteStore.withImportCache(db) { throw Refused() } }
        }
        #expect(try store.write { db in try Self.cacheSize(db) } == -2000)
    }

    @Test func anImportLeavesTheWritingConnectionAtTheDefault() throws {
        let store = try SQLiteStore(at: try Scratch.folder("galley-cache").appending(path: "store"))
        let result = try store.importZip(Self.fixtures.appending(path: "example-valid.zip").path, force: false)
        #expect(result.status == .imported)
        #expect(try store.write { db in try Self.cacheSize(db) } == -2000)
    }
}
