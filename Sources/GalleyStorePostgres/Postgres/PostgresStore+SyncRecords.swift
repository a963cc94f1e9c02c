import Foundation
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit
import PostgresNIO

// What `galley sync` records: followed feeds and refused packages.
extension PostgresStore {
    public func followedFeed(_ url: String) throws -> FollowedFeed? {
        try read { connection in
            try connection.rows("SELECT url, etag, revision, synced_at, expires, key_id FROM sync_feed WHERE url = \(url)", logger).first.map {
                FollowedFeed(url: try $0.string("url"), etag: try $0.optionalString("etag"), revision: try $0.int("revision"),
                             syncedAt: try $0.string("synced_at"), expires: try $0.optionalString("expires"),
                             keyID: try $0.optionalString("key_id"))
            }
        }
    }

    public func recordFollowedFeed(_ feed: FollowedFeed) throws {
        try writing { connection in
            try connection.run("""
                INSERT INTO sync_feed (url, etag, revision, synced_at, expires, key_id)
                VALUES (\(feed.url), \(feed.etag), \(feed.revision), \(feed.syncedAt), \(feed.expires), \(feed.keyID))
                ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, revision = excluded.revision, synced_at = excluded.synced_at,
                    expires = excluded.expires, key_id = excluded.key_id
                """, logger)
        }
    }

    public func refusedPackage(_ sha256: String) throws -> RefusedPackage? {
        try read { connection in
            try connection.rows("SELECT sha256, apple_id, message, refused_at FROM sync_refused WHERE sha256 = \(sha256)", logger).first.map {
                RefusedPackage(sha256: try $0.string("sha256"), appleID: try $0.string("apple_id"), message: try $0.string("message"),
                               refusedAt: try $0.string("refused_at"))
            }
        }
    }

    public func recordRefusedPackage(_ refused: RefusedPackage) throws {
        try writing { connection in
            try connection.run("""
                INSERT INTO sync_refused (sha256, apple_id, message, refused_at)
                VALUES (\(refused.sha256), \(refused.appleID), \(refused.message), \(refused.refusedAt))
                ON CONFLICT (sha256) DO UPDATE SET apple_id = excluded.apple_id, message = excluded.message, refused_at = excluded.refused_at
                """, logger)
        }
    }
}
