import Foundation
import GRDB
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit

extension SQLiteStore {
    /// A `StoredIssue` from `issue i`.
    static let issueColumns = """
        i.globalID AS global_id, i.appleID AS apple_id, i.title, i.displayDate AS display_date,
        i.publishDate AS publish_date, i.lastUpdated AS last_updated,
        i.articleCount AS articles
        """

    /// A `StoredArticle` (without snippet) from `article a JOIN issue i`.
    static let articleColumns = """
        a.globalID AS global_id, i.globalID AS issue_global_id, a.placement, a.title, a.dek, a.section, a.type,
        a.authorName AS author, a.dateLastUpdated AS date, a.featured, a.keywords
        """

    /// Every issue, newest first (publish day, then last update, then apple_id: a stable order).
    public func issues() throws -> [StoredIssue] {
        try database.read { db in
            try StoredIssue.fetchAll(db, sql: """
                SELECT \(Self.issueColumns) FROM issue i
                ORDER BY i.publishDay DESC, i.lastUpdatedMS DESC, i.appleID
                """)
        }
    }

    /// The issue with this global id or apple_id, without its articles; an unknown id is an
    /// error, never "all".
    public func issueSummary(_ id: String) throws -> StoredIssue {
        try database.read { db in try issueSummary(id, db) }
    }

    package func issueSummary(_ id: String, _ db: Database) throws -> StoredIssue {
        guard let issue = try StoredIssue.fetchOne(db, sql: """
            SELECT \(Self.issueColumns) FROM issue i
            WHERE i.globalID = ? OR i.appleID = ?
            """, arguments: [id, id]) else {
            throw StoreLookup.noIssue(id, store: root.path)
        }
        return issue
    }

    /// The issue with this global id or apple_id, then its articles in order, in one read (a
    /// GRDB cursor); an unknown id is an error, never "all".
    public func eachIssueArticle(
        _ id: String, withBodies: Bool, begin: (StoredIssue) throws -> Void, _ body: (StoredArticle) throws -> Void
    ) throws {
        try database.read { db in
            let issue = try issueSummary(id, db)
            try begin(issue)
            var filter = ArticleFilter(issue: issue.globalID)
            filter.withBodies = withBodies
            try eachArticle(filter, db, body)
        }
    }

    /// The listing read row by row (a GRDB cursor in one read): `galley articles` prints each
    /// as it comes.
    public func eachArticle(_ filter: ArticleFilter, _ body: (StoredArticle) throws -> Void) throws {
        try database.read { db in try eachArticle(filter, db, body) }
    }

    /// `eachArticle` within a read already open (`eachIssueArticle`'s, after its issue).
    private func eachArticle(_ filter: ArticleFilter, _ db: Database, _ body: (StoredArticle) throws -> Void) throws {
        let (sql, arguments) = try articleQuery(filter, extra: 0, db)
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() { try body(try StoredArticle(row: row)) }
    }

    public func articlePage(_ filter: ArticleFilter) throws -> ArticlePage {
        try database.read { db in
            let rows = try articleRows(filter, extra: 1, db)
            let limit = filter.limit ?? rows.count
            let items = try rows.prefix(limit).map { try StoredArticle(row: $0) }
            let next = rows.count > limit ? rows.prefix(limit).last.map { ArticleCursor(row: $0, byDate: filter.byDate).encoded } : nil
            return ArticlePage(items: items, next: next)
        }
    }

    /// The listing's rows (with the sort key columns a cursor is made of), `extra` more than
    /// the limit.
    private func articleRows(_ filter: ArticleFilter, extra: Int, _ db: Database) throws -> [Row] {
        let (sql, arguments) = try articleQuery(filter, extra: extra, db)
        return try Row.fetchAll(db, sql: sql, arguments: arguments)
    }

    /// The SELECT of `articleRows` with its arguments.
    private func articleQuery(_ filter: ArticleFilter, extra: Int, _ db: Database) throws -> (String, StatementArguments) {
        // One issue's articles in placement order are its `articleListing` index's order: the
        // issue's own keys are the same on every row, so a page reads only the page.
        let issueKey = try filter.issue.map { try self.issueKey($0, db) }
        let inPlacementOrder = issueKey != nil && !filter.byDate
        var query = SQLFilter()
        if let issueKey { query.add("a.issueId = ?", [issueKey.row]) }
        if let type = filter.type { query.add("a.type = ?", [type]) }
        if let excluded = filter.excludeType { query.add("a.type <> ?", [excluded]) }
        // An equality, so that `articleFeatured` seeks it.
        if filter.featured { query.add("a.featured = 1") }
        if let keyword = filter.keyword {
            // Whole keywords of the comma-separated list, not substrings ("art" ≠ "party").
            let escaped = keyword.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_")
            query.add("(',' || a.keywords || ',') LIKE ? ESCAPE '\\'", ["%,\(escaped),%"])
        }
        // The order is total (apple_id and placement are unique together), so a cursor names one
        // place in it; the first key is coalesced so that a row without it has a key too.
        let key = ArticleCursor.keySQL(byDate: filter.byDate)
        if let after = filter.after {
            guard let cursor = ArticleCursor(encoded: after), cursor.byDate == filter.byDate else {
                throw ArticleCursor.notThisListing
            }
            if inPlacementOrder, let issueKey {
                // A cursor of this issue's listing names this issue (then this is the general
                // test, the issue's keys being equal on both sides).
                guard cursor.appleID == issueKey.appleID else { throw ArticleCursor.otherIssue(issueKey.appleID) }
                query.add("\(key) = ? AND a.placement > ?", [cursor.key.databaseValue, cursor.placement])
            } else {
                query.add("(\(key) < ? OR (\(key) = ? AND (i.appleID > ? OR (i.appleID = ? AND a.placement > ?))))",
                          [cursor.key.databaseValue, cursor.key.databaseValue, cursor.appleID, cursor.appleID, cursor.placement])
            }
        }
        let columns = Self.articleColumns + (filter.withBodies ? ", a.body" : "")
            + ", \(key) AS cursorKey, i.appleID AS cursorIssue"
        // In the issue order, issues drive the join (CROSS JOIN keeps SQLite from turning it
        // around): it walks the issueListing index and stops once the page is full.
        let join = filter.byDate || inPlacementOrder ? "article a JOIN issue i" : "issue i CROSS JOIN article a"
        var sql = "SELECT \(columns) FROM \(join) ON i.id = a.issueId" + query.whereSQL
        sql += inPlacementOrder ? " ORDER BY a.placement" : " ORDER BY \(key) DESC, i.appleID, a.placement"
        var arguments = query.arguments
        if let limit = filter.limit {
            sql += " LIMIT ? OFFSET ?"
            _ = arguments.append(contentsOf: [limit + extra, limit * filter.page])
        }
        return (sql, arguments)
    }

    /// Removes an issue's rows and its folder, nothing else.
    public func delete(_ id: String) throws -> StoredIssue {
        try withWriterLock {
            let issue = try issueSummary(id)
            _ = try writer() // makes the store's folders, `staging/` among them, for the mark
            let unmark = try markWriting()
            defer { unmark() }
            let removed = try write { db -> IssueRow? in
                guard let row = try IssueRow.filter(IssueRow.Columns.globalID == issue.globalID).fetchOne(db), let id = row.id else {
                    return nil
                }
                try Self.deleteRows(ofIssue: id, db)
                return row
            }
            if let folder = removed?.folder { try? FolderRemoval.remove(issuesFolder.appending(path: folder).path) }
            if let package = removed?.packageSHA256 { removeUnusedPackages([package]) }
            return issue
        }
    }

    /// Database integrity, every file present with its recorded size and checksum, no orphan
    /// folders, files or rows.
    public func check() throws -> StoreCheck {
        try database.read { db in
            let integrity = try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "unknown"
            var problems: [String] = []
            if integrity != "ok" { problems.append("database: \(integrity)") }
            let folders = try IssueRow.fetchAll(db)
            var fileCount = 0
            for row in folders {
                let folder = row.folder
                let base = issuesFolder.appending(path: folder)
                let files = try FileRow.filter(FileRow.Columns.issueId == row.id).fetchAll(db)
                var expected = Set<String>()
                for file in files {
                    fileCount += 1
                    let name = file.name
                    expected.insert(name)
                    let url = base.appending(path: name)
                    guard let status = FileStatus(url.path), status.kind == .file else {
                        problems.append("issues/\(folder)/\(name): missing")
                        continue
                    }
                    if status.size != file.size {
                        problems.append("issues/\(folder)/\(name): \(status.size) bytes, recorded \(file.size)")
                        continue
                    }
                    if (try? FileDigest.of(url.path).sha256) != file.sha256 {
                        problems.append("issues/\(folder)/\(name): content differs from its checksum")
                    }
                }
                let present = (FileManager.default.enumerator(atPath: base.path)?.allObjects as? [String] ?? [])
                    .filter { FileStatus(base.appending(path: $0).path)?.kind == .file }
                for name in present where !expected.contains(name) {
                    problems.append("issues/\(folder)/\(name): not recorded (orphan file)")
                }
                let missingAssets = try String.fetchAll(db, sql: """
                    SELECT fileName FROM asset WHERE issueId = ? AND fileName NOT IN (SELECT name FROM file WHERE issueId = ?)
                    """, arguments: [row.id, row.id])
                for name in missingAssets { problems.append("issue \(row.appleID): asset file `\(name)` has no file row") }
            }
            let kept = Dictionary(folders.compactMap { row in row.packageSHA256.map { ($0, row.packageSize ?? -1) } },
                                  uniquingKeysWith: { first, _ in first })
            for (sha, size) in kept.sorted(by: { $0.key < $1.key }) {
                let url = packageURL(sha)
                guard let status = FileStatus(url.path), status.kind == .file else {
                    problems.append("packages/\(sha).zip: missing (re-import the issue with --force)")
                    continue
                }
                if status.size != size {
                    problems.append("packages/\(sha).zip: \(status.size) bytes, recorded \(size)")
                } else if (try? FileDigest.of(url.path).sha256) != sha {
                    problems.append("packages/\(sha).zip: content differs from its name")
                }
            }
            for name in (try? FileManager.default.contentsOfDirectory(atPath: packagesFolder.path)) ?? []
            where !kept.keys.contains(String(name.dropLast(4))) || !name.hasSuffix(".zip") {
                problems.append("packages/\(name): no issue uses this zip (leftover; `galley store gc` removes it)")
            }
            let referenced = Set(folders.map(\.folder))
            for name in (try? FileManager.default.contentsOfDirectory(atPath: issuesFolder.path)) ?? [] where !referenced.contains(name) {
                problems.append("issues/\(name): no issue uses this folder (leftover; `galley store gc` removes it)")
            }
            for name in (try? FileManager.default.contentsOfDirectory(atPath: stagingFolder.path)) ?? [] {
                problems.append("staging/\(name): an interrupted import (`galley store gc` removes it)")
            }
            let orphanRows = try Int.fetchOne(db, sql: """
                SELECT (SELECT COUNT(*) FROM article WHERE issueId NOT IN (SELECT id FROM issue))
                     + (SELECT COUNT(*) FROM asset WHERE issueId NOT IN (SELECT id FROM issue))
                     + (\(SearchText.orphansSQL))
                """) ?? 0
            if orphanRows > 0 { problems.append("database: \(orphanRows) rows belong to no issue") }
            return StoreCheck(integrity: integrity, issues: folders.count, files: fileCount, problems: problems)
        }
    }

    /// Nothing to do: SQLite here plans by its indexes alone (the store never gathers
    /// `sqlite_stat1` statistics, so no plan depends on them going stale).
    public func settleAfterLoad() throws {}

    /// Removes what interrupted imports left behind.
    public func collectGarbage() throws -> [String] {
        try withWriterLock {
            var removed = try removeLeftovers()
            // Only a store with something to remove is written to (see `init`).
            guard try database.read({ db in try Int.fetchOne(db, sql: SearchText.orphansSQL) ?? 0 }) > 0 else { return removed }
            try write { db in
                let rows = try Int.fetchOne(db, sql: SearchText.orphansSQL) ?? 0
                // The index has no copy of an article that is gone to take its words out with:
                // it is built again from the articles.
                if rows > 0 {
                    try SearchText.rebuild(db)
                    removed.append("\(rows) search rows")
                }
            }
            return removed
        }
    }
}

// The records decode from columns aliased to their coding keys (`issueColumns` and friends).
extension StoredIssue: FetchableRecord {}
extension StoredArticle: FetchableRecord {}
extension StoredAsset: FetchableRecord {}
