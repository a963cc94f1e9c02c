import Foundation
import GRDB
import GalleyCore
import GalleyStore

extension SQLiteStore {
    public func followedFeed(_ url: String) throws -> FollowedFeed? {
        try database.read { db in
            try Row.fetchOne(db, sql: "SELECT url, etag, revision, syncedAt, expires, keyID FROM syncFeed WHERE url = ?", arguments: [url]).map {
                FollowedFeed(url: $0["url"], etag: $0["etag"], revision: $0["revision"], syncedAt: $0["syncedAt"], expires: $0["expires"],
                             keyID: $0["keyID"])
            }
        }
    }

    public func recordFollowedFeed(_ feed: FollowedFeed) throws {
        try withWriterLock {
            try write { db in
                try db.execute(sql: """
                    INSERT INTO syncFeed (url, etag, revision, syncedAt, expires, keyID) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(url) DO UPDATE SET etag = excluded.etag, revision = excluded.revision, syncedAt = excluded.syncedAt,
                        expires = excluded.expires, keyID = excluded.keyID
                    """, arguments: [feed.url, feed.etag, feed.revision, feed.syncedAt, feed.expires, feed.keyID])
            }
        }
    }

    public func refusedPackage(_ sha256: String) throws -> RefusedPackage? {
        try database.read { db in
            try Row.fetchOne(db, sql: "SELECT sha256, appleID, message, refusedAt FROM syncRefused WHERE sha256 = ?", arguments: [sha256]).map {
                RefusedPackage(sha256: $0["sha256"], appleID: $0["appleID"], message: $0["message"], refusedAt: $0["refusedAt"])
            }
        }
    }

    public func recordRefusedPackage(_ refused: RefusedPackage) throws {
        try withWriterLock {
            try write { db in
                try db.execute(sql: """
                    INSERT INTO syncRefused (sha256, appleID, message, refusedAt) VALUES (?, ?, ?, ?)
                    ON CONFLICT(sha256) DO UPDATE SET appleID = excluded.appleID, message = excluded.message, refusedAt = excluded.refusedAt
                    """, arguments: [refused.sha256, refused.appleID, refused.message, refused.refusedAt])
            }
        }
    }
}
