import Foundation
import GRDB
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit

// An issue's files and assets.
extension SQLiteStore {
    public func file(_ name: String, issue: String) throws -> StoredFile {
        try database.read { db in
            let summary = try issueSummary(issue, db)
            guard let row = try Row.fetchOne(db, sql: """
                SELECT f.name, f.size, f.sha256, i.folder FROM file f JOIN issue i ON i.id = f.issueId
                WHERE i.globalID = ? AND f.name = ?
                """, arguments: [summary.globalID, name]) else {
                throw StoreLookup.noFile(name, issue: issue, store: root.path)
            }
            let folder: String = row["folder"]
            return StoredFile(name: row["name"], path: issuesFolder.appending(path: folder).appending(path: name).path,
                              size: row["size"], sha256: row["sha256"], lastUpdated: DumplingDate.rfc3339(summary.lastUpdated))
        }
    }

    /// A `StoredAsset` (its path still empty) from `asset s JOIN issue i LEFT JOIN article a
    /// LEFT JOIN file f` (`fileJoin`: the file gives the content's digest).
    static let assetColumns = """
        s.globalID AS global_id, i.globalID AS issue_global_id, a.globalID AS article_global_id, s.kind,
        s.placement, s.caption, s.source AS credit, s.fileName AS file_name, s.crop350 AS crop_350_350,
        s.metadata, '' AS path, f.sha256
        """

    /// The asset's file row, by the `UNIQUE (issueId, name)` index: one row or none per asset.
    static let fileJoin = "LEFT JOIN file f ON f.issueId = s.issueId AND f.name = s.fileName"

    /// The asset with its file's path in the store, in its issue's folder.
    func assetPath(_ row: StoredAsset, folder: String?) -> StoredAsset {
        var copy = row
        if let folder { copy.path = issuesFolder.appending(path: folder).appending(path: row.fileName).path }
        return copy
    }

    /// The listing read row by row from one read transaction (a GRDB cursor): `galley assets`
    /// prints each as it comes, so the command's memory does not grow with the listing.
    public func eachAsset(_ filter: AssetFilter, _ body: (StoredAsset) throws -> Void) throws {
        try database.read { db in
            var (sql, arguments) = try assetQuery(filter, columns: Self.assetColumns + ", i.folder AS folder", withFile: true, db)
            // One issue's assets in the `assetOrder` index's order where it gives it (the issue's
            // own, the cover first); the issue's place in the listing only when there are several.
            if filter.issue != nil && filter.issueOwn {
                sql += " ORDER BY s.kind, s.placement"
            } else if filter.issue != nil {
                sql += " ORDER BY coalesce(a.placement, 0), s.kind, s.placement"
            } else {
                sql += " ORDER BY i.publishDay DESC, i.appleID, coalesce(a.placement, 0), s.kind, s.placement"
            }
            if filter.first { sql += " LIMIT 1" }
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() { try body(assetPath(try StoredAsset(row: row), folder: row["folder"])) }
        }
    }

    /// How many assets `assets(filter)` lists, counted by SQLite (`/assets?count=true`): listing
    /// 60,000 assets to count them made a record and a path for each.
    public func assetCount(_ filter: AssetFilter) throws -> Int {
        try database.read { db in
            let (sql, arguments) = try assetQuery(filter, columns: "1", withFile: false, db)
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(sql)\(filter.first ? " LIMIT 1" : ""))", arguments: arguments) ?? 0
        }
    }

    /// The SELECT of `columns` over the assets `filter` names (with the file's digest), with its
    /// arguments (no order, no limit); an unknown issue or article throws, as the listing does.
    private func assetQuery(
        _ filter: AssetFilter, columns: String, withFile: Bool, _ db: Database
    ) throws -> (String, StatementArguments) {
        let articleID = try filter.article.map { try articleRowID($0, issue: filter.issue, db) }
        var query = SQLFilter()
        if let issue = filter.issue { query.add("s.issueId = ?", [try issueRowID(issue, db)]) }
        if let articleID { query.add("s.articleId = ?", [articleID]) }
        if let kind = filter.first ? .image : filter.kind { query.add("s.kind = ?", [kind.rawValue]) }
        if filter.issueOwn { query.add("s.articleId IS NULL") }
        let sql = """
            SELECT \(columns) FROM asset s JOIN issue i ON i.id = s.issueId
            LEFT JOIN article a ON a.id = s.articleId \(withFile ? Self.fileJoin : "")
            """ + query.whereSQL
        return (sql, query.arguments)
    }
}
