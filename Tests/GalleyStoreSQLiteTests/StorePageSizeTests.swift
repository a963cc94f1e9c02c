import Foundation
import GRDB
import Testing
@testable import GalleyCore
@testable import GalleyStore
@testable import GalleyStoreSQLite
import GalleyTestSupport

/// A new store is made with 16 KiB pages (an article's row and its search text fit a page); a
/// store made before keeps its own.
struct StorePageSizeTests {
    static func pageSize(_ root: URL) throws -> Int {
        try DatabaseQueue(path: root.appending(path: "store.sqlite").path).read { db in
            try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
        }
    }

    @Test func aNewStoreHas16KiBPagesAndAnOlderOneKeepsItsOwn() throws {
        let folder = try Scratch.folder("galley-pages")
        let new = folder.appending(path: "new")
        _ = try SQLiteStore(at: new).writer()
        #expect(try Self.pageSize(new) == 16384)

        // A store of 4 KiB pages, as Galley made them before: opened for writing, it stays so.
        let old = folder.appending(path: "old")
        try FileManager.default.createDirectory(at: old, withIntermediateDirectories: true)
        try DatabaseQueue(path: old.appending(path: "store.sqlite").path).write { db in
            try db.execute(sql: "PRAGMA page_size = 4096; CREATE TABLE placeholder (x)")
        }
        _ = try SQLiteStore(at: old).writer()
        #expect(try Self.pageSize(old) == 4096)
    }
}
