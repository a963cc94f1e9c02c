import Foundation
import GRDB
import GalleyCore
import GalleyStore

// What `store copy` reads and writes beyond imports and merges.
extension SQLiteStore {
    public func followedFeeds() throws -> [FollowedFeed] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT url, etag, revision, syncedAt, expires, keyID FROM syncFeed ORDER BY url").map {
                FollowedFeed(url: $0["url"], etag: $0["etag"], revision: $0["revision"], syncedAt: $0["syncedAt"], expires: $0["expires"],
                             keyID: $0["keyID"])
            }
        }
    }

    public func refusedPackages() throws -> [RefusedPackage] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT sha256, appleID, message, refusedAt FROM syncRefused ORDER BY sha256").map {
                RefusedPackage(sha256: $0["sha256"], appleID: $0["appleID"], message: $0["message"], refusedAt: $0["refusedAt"])
            }
        }
    }

    public func raisePackageVersion(_ appleID: String, to version: Int64) throws {
        try withWriterLock {
            try write { db in
                try db.execute(sql: """
                    INSERT INTO packageVersion (appleID, version) VALUES (?, ?)
                    ON CONFLICT (appleID) DO UPDATE SET version = max(version, excluded.version)
                    """, arguments: [appleID, version])
                try db.execute(sql: "UPDATE issue SET packageVersion = ? WHERE appleID = ? AND packageVersion < ?",
                               arguments: [version, appleID, version])
            }
        }
    }
}
