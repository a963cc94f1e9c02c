import Foundation
import GalleyCore
import GalleyStore
import PostgresNIO

// What `store copy` reads and writes beyond imports and merges.
extension PostgresStore {
    public func followedFeeds() throws -> [FollowedFeed] {
        try read { connection in
            try connection.rows("SELECT url, etag, revision, synced_at, expires, key_id FROM sync_feed ORDER BY url", logger).map {
                FollowedFeed(url: try $0.string("url"), etag: try $0.optionalString("etag"), revision: try $0.int("revision"),
                             syncedAt: try $0.string("synced_at"), expires: try $0.optionalString("expires"),
                             keyID: try $0.optionalString("key_id"))
            }
        }
    }

    public func refusedPackages() throws -> [RefusedPackage] {
        try read { connection in
            try connection.rows("SELECT sha256, apple_id, message, refused_at FROM sync_refused ORDER BY sha256", logger).map {
                RefusedPackage(sha256: try $0.string("sha256"), appleID: try $0.string("apple_id"), message: try $0.string("message"),
                               refusedAt: try $0.string("refused_at"))
            }
        }
    }

    public func raisePackageVersion(_ appleID: String, to version: Int64) throws {
        try writing { connection in
            try transaction(connection) {
                try connection.run("""
                    INSERT INTO package_version (apple_id, version) VALUES (\(appleID), \(version))
                    ON CONFLICT (apple_id) DO UPDATE SET version = greatest(package_version.version, excluded.version)
                    """, logger)
                try connection.run("""
                    UPDATE issue SET package_version = \(version) WHERE apple_id = \(appleID) AND package_version < \(version)
                    """, logger)
            }
        }
    }
}
