import Foundation
import GRDB
import GalleyCore
import GalleyStore

extension SQLiteStore {
    public func mergeIndependentArticles(_ articles: [IndependentArticle], source: String) throws -> ArticleMerge {
        // Compared first with a read of the batch's own rows (not the whole table: a feed of 20
        // items into a store of 30,000 reads 20): a merge of what the store already holds writes
        // nothing (no transaction, no revision change), so a re-sync leaves the store's bytes alone.
        let stored = try database.read { db in
            var rows: [String: IndependentArticle] = [:]
            let ids = articles.map(\.globalID)
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = Array(ids[start..<min(start + 500, ids.count)])
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                for row in try Row.fetchAll(db, sql: "SELECT * FROM independentArticle WHERE globalID IN (\(marks))",
                                            arguments: StatementArguments(chunk)) {
                    let article = Self.independentArticle(row)
                    rows[article.globalID] = article
                }
            }
            return rows
        }
        let (merge, changed) = ArticleMerge.plan(articles, stored: stored)
        guard !changed.isEmpty else { return merge }
        let now = Date().ISO8601Format()
        try withWriterLock {
            try write { db in
                for article in changed {
                    let keywords = JSONWriter(pretty: false).encode(.array(article.keywords.map { .string($0) }))
                    let dateMS = article.date.flatMap(ISODateTime.init(parsing:))?.millisecondsSinceEpoch
                    try db.execute(sql: """
                        INSERT INTO independentArticle
                            (globalID, title, dek, section, type, author, date, dateMS, keywords, body, url, featured, source, mergedAt)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT(globalID) DO UPDATE SET title = excluded.title, dek = excluded.dek, section = excluded.section,
                            type = excluded.type, author = excluded.author, date = excluded.date, dateMS = excluded.dateMS,
                            keywords = excluded.keywords, body = excluded.body, url = excluded.url, featured = excluded.featured,
                            source = excluded.source, mergedAt = excluded.mergedAt
                        """, arguments: [article.globalID, article.title, article.dek, article.section, article.type, article.author,
                                         article.date, dateMS, keywords, article.body, article.url, article.featured, source, now])
                }
            }
        }
        return merge
    }

    public func independentArticles() throws -> [IndependentArticle] {
        try database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM independentArticle
                ORDER BY coalesce(dateMS, -9223372036854775807) DESC, globalID
                """).map(Self.independentArticle)
        }
    }

    static func independentArticle(_ row: Row) -> IndependentArticle {
        var article = IndependentArticle(globalID: row["globalID"], title: row["title"])
        article.dek = row["dek"]
        article.section = row["section"]
        article.type = row["type"]
        article.author = row["author"]
        article.date = row["date"]
        if case .array(let items)? = JSONValue(parsing: row["keywords"] as String) { article.keywords = items.compactMap(\.stringValue) }
        article.body = row["body"]
        article.url = row["url"]
        article.featured = row["featured"]
        return article
    }
}
