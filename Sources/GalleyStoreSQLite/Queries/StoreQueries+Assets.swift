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
                throw GalleyError("no file `\(name)` in issue `\(issue)`", id: .notFound, path: root.path,
                                  hint: "`galley assets --issue \(issue)` lists its files.")
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

    /// The asset with its file's path in the store, by its issue's folder.
    func assetPath(_ row: StoredAsset, folders: [String: String]) -> StoredAsset {
        var copy = row
        if let folder = folders[row.issueGlobalID] {
            copy.path = issuesFolder.appending(path: folder).appending(path: row.fileName).path
        }
        return copy
    }

    /// The listing read row by row from one read transaction (a GRDB cursor): `galley assets`
    /// prints each as it comes, so the command's memory does not grow with the listing.
    public func eachAsset(_ filter: AssetFilter, _ body: (StoredAsset) throws -> Void) throws {
        try database.read { db in
            var (sql, arguments) = try assetQuery(filter, columns: Self.assetColumns, db)
            sql += " ORDER BY i.publishDay DESC, i.appleID, coalesce(a.placement, 0), s.kind, s.placement"
            if filter.first { sql += " LIMIT 1" }
            // Each issue's folder by its global id: two columns, not every issue's whole row.
            let folders = Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT globalID, folder FROM issue").map {
                ($0["globalID"] as String, $0["folder"] as String)
            })
            let rows = try StoredAsset.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() { try body(assetPath(row, folders: folders)) }
        }
    }

    /// How many assets `assets(filter)` lists, counted by SQLite (`/assets?count=true`): listing
    /// 60,000 assets to count them made a record and a path for each.
    public func assetCount(_ filter: AssetFilter) throws -> Int {
        try database.read { db in
            let (sql, arguments) = try assetQuery(filter, columns: "1", db)
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(sql)\(filter.first ? " LIMIT 1" : ""))", arguments: arguments) ?? 0
        }
    }

    /// The SELECT of `columns` over the assets `filter` names, with its arguments (no order, no
    /// limit); an unknown issue or article throws, as the listing does.
    private func assetQuery(_ filter: AssetFilter, columns: String, _ db: Database) throws -> (String, StatementArguments) {
        if let issue = filter.issue { _ = try issueSummary(issue, db) }
        let articleID = try filter.article.map { try articleRowID($0, issue: filter.issue, db) }
        var query = SQLFilter()
        query.issue(filter.issue)
        if let articleID { query.add("s.articleId = ?", [articleID]) }
        if let kind = filter.first ? .image : filter.kind { query.add("s.kind = ?", [kind.rawValue]) }
        if filter.issueOwn { query.add("s.articleId IS NULL") }
        let sql = """
            SELECT \(columns) FROM asset s JOIN issue i ON i.id = s.issueId
            LEFT JOIN article a ON a.id = s.articleId \(columns == Self.assetColumns ? Self.fileJoin : "")
            """ + query.whereSQL
        return (sql, query.arguments)
    }
}
