import Foundation
import GRDB
import GalleyCore

extension SQLiteStore {
    public func followedFeed(_ url: String) throws -> FollowedFeed? {
        try database.read { db in
            try Row.fetchOne(db, sql: "SELECT url, etag, revision, syncedAt FROM syncFeed WHERE url = ?", arguments: [url]).map {
                FollowedFeed(url: $0["url"], etag: $0["etag"], revision: $0["revision"], syncedAt: $0["syncedAt"])
            }
        }
    }

    public func recordFollowedFeed(_ feed: FollowedFeed) throws {
        try withWriterLock {
            try writer().write { db in
                try db.execute(sql: """
                    INSERT INTO syncFeed (url, etag, revision, syncedAt) VALUES (?, ?, ?, ?)
                    ON CONFLICT(url) DO UPDATE SET etag = excluded.etag, revision = excluded.revision, syncedAt = excluded.syncedAt
                    """, arguments: [feed.url, feed.etag, feed.revision, feed.syncedAt])
            }
        }
    }
}
