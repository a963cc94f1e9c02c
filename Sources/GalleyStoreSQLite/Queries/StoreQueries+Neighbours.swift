import Foundation
import GRDB
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit

// An article's and an issue's neighbours.
extension SQLiteStore {
    /// The row id of the issue with this global id or apple_id (an unknown id is an error), so
    /// that listings of one issue seek their rows by `issueId`.
    func issueRowID(_ id: String, _ db: Database) throws -> Int64 { try issueKey(id, db).row }

    /// The row id and apple_id of an issue by either id.
    func issueKey(_ id: String, _ db: Database) throws -> (row: Int64, appleID: String) {
        // The lowest of the (at most two) rows, taken here: `ORDER BY id` would sort them.
        let rows = try Row.fetchAll(db, sql: "SELECT id, appleID FROM issue WHERE globalID = ? OR appleID = ?", arguments: [id, id])
        guard let first = rows.min(by: { ($0["id"] as Int64) < ($1["id"] as Int64) }) else {
            throw StoreLookup.noIssue(id, store: root.path)
        }
        return (first["id"], first["appleID"])
    }

    /// The row id of an article by global id; with several issues holding that id, `issue` decides.
    func articleRowID(_ id: String, issue: String?, _ db: Database) throws -> Int64 {
        var sql = "SELECT a.id FROM article a JOIN issue i ON i.id = a.issueId WHERE a.globalID = ?"
        var arguments: StatementArguments = [id]
        if let issue {
            sql += " AND (i.globalID = ? OR i.appleID = ?)"
            _ = arguments.append(contentsOf: [issue, issue])
        }
        return try StoreLookup.oneArticle(try Int64.fetchAll(db, sql: sql, arguments: arguments), id, store: root.path)
    }

    public func eachArticleNeighbour(
        _ id: String, issue: String?, sides: Set<ArticleNeighbour>, begin: (ArticleDetail) throws -> Void,
        _ neighbour: (ArticleNeighbour, StoredArticle) throws -> Void
    ) throws {
        try database.read { db in
            let rowID = try articleRowID(id, issue: issue, db)
            guard let row = try ArticleRow.fetchOne(db, key: rowID), let issueRow = try IssueRow.fetchOne(db, key: row.issueId) else {
                throw GalleyError("no article `\(id)` in the store", id: .notFound, path: root.path)
            }
            guard let summary = try StoredArticle.fetchOne(db, sql: """
                SELECT \(Self.articleColumns) FROM article a JOIN issue i ON i.id = a.issueId WHERE a.id = ?
                """, arguments: [rowID]) else { throw GalleyError("no article `\(id)` in the store", id: .notFound, path: root.path) }
            let assetRows = try StoredAsset.fetchAll(db, sql: """
                SELECT \(Self.assetColumns) FROM asset s JOIN issue i ON i.id = s.issueId
                LEFT JOIN article a ON a.id = s.articleId \(Self.fileJoin) WHERE s.articleId = ? ORDER BY s.kind, s.placement
                """, arguments: [rowID])
            let assets = assetRows.map { assetPath($0, folder: issueRow.folder) }
            let metaText = row.customMeta
            let meta = JSONValue(parsing: metaText) ?? .string(metaText)
            try begin(ArticleDetail(
                article: summary, body: row.body, description: row.description, url: row.url,
                authorURL: row.authorURL, authorBio: row.authorBio, sku: row.sku, published: row.published,
                customMeta: JSONValueBox(meta), assets: assets, newer: [], older: []))
            guard let dateMS = row.dateMS else { return }
            for (side, comparison, order) in [(ArticleNeighbour.newer, ">", "ASC"), (.older, "<", "DESC")] where sides.contains(side) {
                let rows = try Row.fetchCursor(db, sql: """
                    SELECT \(Self.articleColumns) FROM article a JOIN issue i ON i.id = a.issueId
                    WHERE a.issueId = ? AND a.dateMS \(comparison) ? ORDER BY a.dateMS \(order), a.placement
                    """, arguments: [row.issueId, dateMS])
                while let row = try rows.next() { try neighbour(side, try StoredArticle(row: row)) }
            }
        }
    }

    /// Issues published strictly before (`older`) or after the given one, nearest first (on one
    /// day, the older ones in the listing's order and the newer ones against it).
    public func issues(relativeTo id: String, older: Bool) throws -> [StoredIssue] {
        try database.read { db in
            let issue = try issueSummary(id, db)
            guard let day = try IssueRow.filter(IssueRow.Columns.globalID == issue.globalID).fetchOne(db)?.publishDay else {
                return []
            }
            // In the listing's order (`issueOrder`), or exactly against it for the newer ones.
            let order = older ? "i.publishDay DESC, i.lastUpdatedMS DESC, i.appleID" : "i.publishDay, i.lastUpdatedMS, i.appleID DESC"
            return try StoredIssue.fetchAll(db, sql: """
                SELECT \(Self.issueColumns) FROM issue i
                WHERE i.publishDay \(older ? "<" : ">") ? ORDER BY \(order)
                """, arguments: [day])
        }
    }
}
