import Foundation
import GRDB
import GalleyCore
import GalleyStore
import GalleyKit

/// The kept zips: `packages/<sha256>.zip`, one per distinct zip, named by content so two issues
/// (or two versions) with the same bytes share one file. An issue row names its zip; a zip no
/// row names is a leftover of an interrupted import, removed by `gc`.
extension SQLiteStore {
    var packagesFolder: URL { root.appending(path: Self.packagesName) }

    func packageURL(_ sha256: String) -> URL { packagesFolder.appending(path: "\(sha256).zip") }

    /// Moves a staged zip to `packages/<sha256>.zip`. Returns whether this call created the file
    /// (so a failed import removes only what it added).
    func placePackage(_ staged: URL, _ digest: FileDigest) throws -> Bool {
        try FileManager.default.createDirectory(at: packagesFolder, withIntermediateDirectories: true)
        let target = packageURL(digest.sha256)
        if FileStatus(target.path)?.kind == .file {
            try? FileManager.default.removeItem(at: staged)
            return false
        }
        // rename(2) replaces atomically; the name is the content, so a racing twin is the same bytes.
        guard rename(staged.path, target.path) == 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: staged)
            throw GalleyError("cannot keep the zip in the store: \(String(cString: strerror(code)))", id: .storeFailed,
                              path: root.path, hint: "Check the permissions of \(packagesFolder.path).")
        }
        return true
    }

    /// Removes kept zips among `names` that no issue row names any more.
    func removeUnusedPackages(_ hashes: [String]) {
        guard !hashes.isEmpty else { return }
        // One seek of `issuePackage` a zip, not every issue's row.
        let used = (try? database.read { db in
            try Set(hashes.filter { try Bool.fetchOne(db, sql: "SELECT 1 FROM issue WHERE packageSHA256 = ? LIMIT 1", arguments: [$0]) ?? false })
        }) ?? Set(hashes)
        for hash in hashes where !used.contains(hash) {
            try? FileManager.default.removeItem(at: packageURL(hash))
        }
    }

    /// The next feed version of `appleID`, recorded in the same transaction as the import.
    static func nextPackageVersion(_ appleID: String, _ db: Database) throws -> Int64 {
        let last = try Int64.fetchOne(db, sql: "SELECT version FROM packageVersion WHERE appleID = ?", arguments: [appleID]) ?? 0
        let next = last + 1
        try db.execute(sql: """
            INSERT INTO packageVersion (appleID, version) VALUES (?, ?)
            ON CONFLICT (appleID) DO UPDATE SET version = excluded.version
            """, arguments: [appleID, next])
        return next
    }

    static let packageColumns = """
        SELECT appleID, globalID, packageVersion, packageSHA256, packageSize, lastUpdated, packageWithheld
        FROM issue WHERE packageSHA256 IS NOT NULL
        """

    private func storedPackage(_ row: Row) -> StoredPackage {
        let sha: String = row["packageSHA256"]
        return StoredPackage(
            appleID: row["appleID"], globalID: row["globalID"], version: row["packageVersion"] ?? 0, sha256: sha,
            size: row["packageSize"] ?? 0, lastUpdated: DumplingDate.rfc3339(row["lastUpdated"]),
            path: packageURL(sha).path, withheld: row["packageWithheld"])
    }

    /// Every issue's package, newest issue first; withheld ones too, with why.
    public func packages() throws -> [StoredPackage] {
        try database.read { db in
            try Row.fetchAll(db, sql: Self.packageColumns + " ORDER BY publishDay DESC, lastUpdatedMS DESC, appleID")
                .map(storedPackage)
        }
    }

    /// One issue's package, by apple_id or global id. An issue imported before Galley kept zips
    /// has none: an error that says how to give it one.
    public func package(_ id: String) throws -> StoredPackage {
        try database.read { db in
            let summary = try issueSummary(id, db)
            guard let row = try Row.fetchOne(db, sql: Self.packageColumns + " AND globalID = ?", arguments: [summary.globalID]) else {
                throw GalleyError("issue `\(summary.appleID)` has no package: it was imported before Galley kept zips", id: .notFound,
                                  path: root.path, hint: "Import its zip again with --force to keep it.")
            }
            return storedPackage(row)
        }
    }
}
