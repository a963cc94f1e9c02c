import Foundation
import GRDB
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit

// The store's revision, read only when its files changed.
extension SQLiteStore {
    public func revision() throws -> Int64 {
        // Read only when the files changed (RevisionWatch), then one statement (atomic on its
        // own, so no transaction around it), prepared once per connection.
        try revisionWatch.revision(readRevision)
    }

    /// Asked on every request `serve` answers: the files' stamps at most once a millisecond
    /// (their two `stat`s were a seventh of a revalidation's CPU).
    public func recentRevision() throws -> Int64 {
        try revisionWatch.revision(within: 1_000_000, readRevision)
    }

    private func readRevision() throws -> Int64 {
        try database.unsafeRead { db in
            try Int64.fetchOne(db.cachedStatement(sql: "SELECT value FROM storeRevision WHERE id = 1")) ?? 0
        }
    }
}
