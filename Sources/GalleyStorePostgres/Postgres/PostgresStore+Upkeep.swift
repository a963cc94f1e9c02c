import Foundation
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit
import PostgresNIO

// The store's upkeep: delete, check, garbage collection.
extension PostgresStore {
    /// Removes an issue's rows, and the blobs no other row names.
    public func delete(_ id: String) throws -> StoredIssue {
        try writing { connection in
            let issue = try issueSummary(id, connection)
            let deleted = try transaction(connection, ifCommitUnsure: { blobs.noteUnsettled() }) { () -> Bool in
                guard let rowID = try connection.rows("SELECT id FROM issue WHERE global_id = \(issue.globalID)", logger).first?.int("id") else {
                    return false
                }
                try noteBlobs(ofIssue: rowID, connection)
                try connection.run("DELETE FROM issue WHERE id = \(rowID)", logger)
                return true
            }
            if deleted { try removeNotedBlobs(connection) }
            return issue
        }
    }

    /// Every blob a row names present with its recorded size and checksum, every asset with a
    /// file row, and nothing in the blob folder that no row names.
    public func check() throws -> StoreCheck {
        try snapshot { connection in
            var problems: [String] = []
            let issueCount = try connection.rows("SELECT count(*) AS n FROM issue", logger).first?.int("n") ?? 0
            // The files through a cursor, by blob: each blob is verified once however many files
            // share it (the one before is all there is to remember), and nothing grows with the
            // file count but the problems, put back in issue and name order after (read whole,
            // the rows of a 30,000-article issue and a table of every blob took the check past
            // the 64 MB goal).
            var fileProblems: [(issue: String, name: String, text: String)] = []
            var files = 0
            var last: (sha: String, problem: String?)?
            try eachRow("""
                SELECT i.apple_id, f.name, f.size, f.sha256 FROM file f JOIN issue i ON i.id = f.issue_id
                ORDER BY f.sha256 COLLATE "C", i.apple_id, f.name
                """, connection) { row in
                files += 1
                let sha = try row.string("sha256")
                let problem = last?.sha == sha ? last?.problem : blobs.verify(sha, size: try row.int("size"))
                last = (sha, problem)
                if let problem {
                    let (issue, name) = (try row.string("apple_id"), try row.string("name"))
                    fileProblems.append((issue, name, "issue \(issue): \(name) (\(blobs.name(sha))): \(problem)"))
                }
            }
            problems += fileProblems.sorted { ($0.issue, $0.name) < ($1.issue, $1.name) }.map(\.text)
            for row in try connection.rows("""
                SELECT i.apple_id, s.file_name FROM asset s JOIN issue i ON i.id = s.issue_id
                WHERE NOT EXISTS (SELECT 1 FROM file f WHERE f.issue_id = s.issue_id AND f.name = s.file_name)
                ORDER BY i.apple_id, s.file_name
                """, logger) {
                problems.append("issue \(try row.string("apple_id")): asset file `\(try row.string("file_name"))` has no file row")
            }
            for row in try connection.rows(PostgresQuery(unsafeSQL: Self.packageSelect + " ORDER BY apple_id"), logger) {
                let sha = try row.string("package_sha256")
                if let problem = blobs.verify(sha, size: try row.optionalInt("package_size") ?? -1) {
                    problems.append("issue \(try row.string("apple_id")): its kept zip (\(blobs.name(sha))): \(problem)")
                }
            }
            let leftovers = try leftovers(connection)
            for sha in leftovers.blobs {
                problems.append("\(blobs.name(sha)): no issue uses this blob (leftover; `galley store gc` removes it)")
            }
            for name in leftovers.staging {
                problems.append("\(blobs.staging.path)/\(name): an interrupted import (`galley store gc` removes it)")
            }
            return StoreCheck(integrity: "ok", issues: Int(issueCount), files: files, problems: problems)
        }
    }

    /// `VACUUM (ANALYZE)`, which autovacuum does too, but up to a minute after a load (its nap
    /// time). Until then search is planned without knowing how many articles a word matches,
    /// and the new rows' words wait in the GIN index's pending list, which every search reads
    /// through, so a selective search scans every article until then (`bench/store_bench.py
    /// --backend postgres` measures searches right after its load).
    public func settleAfterLoad() throws {
        try read { connection in try connection.run("VACUUM (ANALYZE)", logger) }
    }

    /// Removes what interrupted imports left behind: staging folders and blobs no row names.
    public func collectGarbage() throws -> [String] {
        try writing { _ in try removeLeftovers() }
    }

    /// Staged imports, and blobs no row names. Call in a snapshot (its cursor needs a
    /// transaction), with the writer lock held to remove them.
    private func leftovers(_ connection: PostgresConnection) throws -> (staging: [String], blobs: [String]) {
        let present = try blobs.all().sorted()
        guard !present.isEmpty else { return (blobs.staged(), []) }
        // The blobs (sorted by `all`) against the names the rows use, both in byte order (a cursor
        // of the server's, not a set of every name): what only the folder has is left over.
        var unused: [String] = []
        var next = present.startIndex
        try eachRow("""
            SELECT sha256 FROM (SELECT sha256 FROM file UNION SELECT package_sha256 FROM issue WHERE package_sha256 IS NOT NULL) AS used
            ORDER BY sha256 COLLATE "C"
            """, connection) { row in
            let used = try row.string("sha256")
            while next < present.endIndex, present[next].utf8.lexicographicallyPrecedes(used.utf8) {
                unused.append(present[next])
                next += 1
            }
            if next < present.endIndex, present[next] == used { next += 1 }
        }
        unused += present[next...]
        return (blobs.staged(), unused)
    }

    @discardableResult
    func removeLeftovers() throws -> [String] {
        let found = try snapshot { connection in try leftovers(connection) }
        var removed: [String] = []
        for name in found.staging {
            try? FolderRemoval.remove(blobs.staging.appending(path: name).path)
            removed.append(blobs.staging.appending(path: name).path)
        }
        for sha in found.blobs {
            blobs.remove(sha)
            removed.append(blobs.name(sha))
        }
        return removed
    }
}
