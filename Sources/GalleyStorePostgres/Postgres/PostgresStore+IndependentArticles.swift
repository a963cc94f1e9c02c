import Foundation
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit
import PostgresNIO

// Articles with no issue, merged by global id.
extension PostgresStore {
    public func mergeIndependentArticles(_ articles: [IndependentArticle], source: String) throws -> ArticleMerge {
        // Compared first against the batch's own rows: a merge of what the store holds writes
        // nothing (no transaction, no revision change).
        let stored = try read { connection in
            Dictionary(try connection.rows("SELECT * FROM independent_article WHERE global_id = ANY(\(articles.map(\.globalID)))", logger)
                .map(Self.independentArticle).map { ($0.globalID, $0) }, uniquingKeysWith: { first, _ in first })
        }
        let (merge, changed) = ArticleMerge.plan(articles, stored: stored)
        guard !changed.isEmpty else { return merge }
        let now = Date().ISO8601Format()
        try writing { connection in
            try transaction(connection) {
                for article in changed {
                    let keywords = JSONWriter(pretty: false).encode(.array(article.keywords.map { .string($0) }))
                    let dateMS = article.date.flatMap(ISODateTime.init(parsing:))?.millisecondsSinceEpoch
                    try connection.run("""
                        INSERT INTO independent_article
                            (global_id, title, dek, section, type, author, date, date_ms, keywords, body, url, featured, source, merged_at)
                        VALUES (\(article.globalID), \(article.title), \(article.dek), \(article.section), \(article.type), \(article.author),
                            \(article.date), \(dateMS), \(keywords), \(article.body), \(article.url), \(article.featured), \(source), \(now))
                        ON CONFLICT (global_id) DO UPDATE SET title = excluded.title, dek = excluded.dek, section = excluded.section,
                            type = excluded.type, author = excluded.author, date = excluded.date, date_ms = excluded.date_ms,
                            keywords = excluded.keywords, body = excluded.body, url = excluded.url, featured = excluded.featured,
                            source = excluded.source, merged_at = excluded.merged_at
                        """, logger)
                }
            }
        }
        return merge
    }

    public func independentArticles() throws -> [IndependentArticle] {
        try read { connection in
            try connection.rows("""
                SELECT * FROM independent_article ORDER BY coalesce(date_ms, -9223372036854775807) DESC, global_id
                """, logger).map(Self.independentArticle)
        }
    }

    static func independentArticle(_ row: PostgresRandomAccessRow) throws -> IndependentArticle {
        var article = IndependentArticle(globalID: try row.string("global_id"), title: try row.string("title"))
        article.dek = try row.string("dek")
        article.section = try row.string("section")
        article.type = try row.string("type")
        article.author = try row.string("author")
        article.date = try row.optionalString("date")
        if case .array(let items)? = JSONValue(parsing: try row.string("keywords")) { article.keywords = items.compactMap(\.stringValue) }
        article.body = try row.string("body")
        article.url = try row.string("url")
        article.featured = try row.bool("featured")
        return article
    }
}
