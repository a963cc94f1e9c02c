import Foundation
import GalleyCore

/// What an import did.
public struct ImportResult: Sendable, Codable {
    public enum Status: String, Sendable, Codable {
        /// The issue was new to the store.
        case imported
        /// An older version was replaced (or `--force`).
        case replaced
        /// The same version was already there: nothing changed.
        case unchanged
    }

    public var path: String
    public var status: Status
    public var appleID: String
    public var globalID: String
    /// The version, in RFC 3339 as Galley's JSON gives instants.
    public var lastUpdated: String
    public var articles: Int
    public var assets: Int
    public var files: Int
    /// The zip as the store keeps it for `serve`'s package feed (null only for an unchanged
    /// issue imported before Galley kept zips).
    @JSONNullable public var package: Package?
    /// What validate warned about (the import went ahead).
    public var warnings: [Diagnostic] = []
    /// Whether the articles' rows were written beside the content pass (`ImportGate.RowsBeside`)
    /// rather than after it: how the import went, for `--verbose`, not part of its JSON.
    public var rowsWrittenBesideThePass = false

    /// The kept zip: its SHA-256 and size, its feed version, and whether the feed serves it.
    public struct Package: Sendable, Codable, Hashable {
        public var sha256: String
        public var size: Int64
        public var version: Int64
        /// Why the feed leaves it out (an older Linechef format), or null when it is served.
        @JSONNullable public var withheld: String?

        package init(sha256: String, size: Int64, version: Int64, withheld: String? = nil) {
            self.sha256 = sha256
            self.size = size
            self.version = version
            self.withheld = withheld
        }
    }

    package enum CodingKeys: String, CodingKey {
        case path, status, articles, assets, files, warnings, package
        case appleID = "apple_id"
        case globalID = "global_id"
        case lastUpdated = "last_updated"
    }

    package init(path: String, status: Status, appleID: String, globalID: String, lastUpdated: String, articles: Int, assets: Int, files: Int, package: Package? = nil, warnings: [Diagnostic] = []) {
        self.path = path
        self.status = status
        self.appleID = appleID
        self.globalID = globalID
        self.lastUpdated = lastUpdated
        self.articles = articles
        self.assets = assets
        self.files = files
        self.package = package
        self.warnings = warnings
    }
}
