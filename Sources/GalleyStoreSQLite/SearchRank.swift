import Foundation
import GRDB
import GRDBSQLite

/// The search's ranking: FTS5's own BM25 (k1 1.2, b 0.75, the same column weights), except
/// for where each phrase's document count comes from. FTS5's `bm25()` counts the rows that
/// hold each phrase by walking that phrase's whole doclist on every query, so a search with one
/// common word cost what listing every article holding it does, whatever the page (114 ms of
/// ranking for a word in all 3 million articles of a store grown by `bench/grow_store.py`).
/// `galley_rank(articleSearch, w1, w2, w3, w4, n1, n2, …)` takes the counts as arguments
/// instead, from `SearchRank.counts`, which counts at most `countLimit` matches of each phrase
/// and estimates past that. With every phrase under the limit the scores are bm25()'s, to the
/// last bit (`StoreSearchTests.theRankIsBM25WithThePhrasesCountsGiven`).
enum SearchRank {
    static let name = "galley_rank"

    /// How many matches of one phrase are counted before the rest is estimated.
    static let countLimit = 10_000

    /// Registers `galley_rank` on a connection (every connection to a store).
    static func register(_ db: Database) {
        let api = FTS5.api(db)
        guard let create = api.pointee.xCreateFunction else { return }
        _ = create(UnsafeMutablePointer(mutating: api), name, nil, rank, nil)
    }

    /// The number of articles that hold each phrase: exact up to `limit`; past it, the
    /// limit scaled by the share of the article ids those newest `limit` matches span
    /// (ids are given in import order, so matches spread over them about as over time).
    static func counts(_ phrases: [String], limit: Int = countLimit, _ db: Database) throws -> [Double] {
        let count = try db.cachedStatement(sql: """
            SELECT count(*) AS n, min(rowid) AS oldest FROM (SELECT rowid FROM articleSearch WHERE articleSearch MATCH ?
            ORDER BY rowid DESC LIMIT ?)
            """)
        // The ids' span, read only for a phrase past the limit. Two subqueries: SQLite seeks an
        // end of the rowid for a lone min() or max() only, and reads every row for both in one.
        var span: (low: Int64, high: Int64)?
        return try phrases.map { phrase in
            guard let row = try Row.fetchOne(count, arguments: [phrase, limit]) else { return 0 }
            let n: Int = row["n"]
            guard n >= limit, let oldest: Int64 = row["oldest"] else { return Double(n) }
            if span == nil, let ends = try Row.fetchOne(db, sql: """
                SELECT (SELECT min(id) FROM article) AS low, (SELECT max(id) FROM article) AS high
                """), let low: Int64 = ends["low"], let high: Int64 = ends["high"] {
                span = (low, high)
            }
            guard let span else { return Double(n) }
            return Double(limit) * Double(span.high - span.low + 1) / Double(max(1, span.high - oldest + 1))
        }
    }

    /// BM25 as `fts5Bm25Function` (SQLite's fts5_aux.c) computes it, the document counts
    /// being the arguments after the column weights.
    private static let rank: fts5_extension_function = { api, context, result, count, values in
        guard let api = api?.pointee, let values else { return }
        let columns = Int(api.xColumnCount(context))
        func argument(_ index: Int) -> Double? {
            index < Int(count) ? sqlite3_value_double(values[index]) : nil
        }
        var rows: Int64 = 0
        var tokens: Int64 = 0
        var length: Int32 = 0
        var instances: Int32 = 0
        guard api.xRowCount(context, &rows) == SQLITE_OK, api.xColumnTotalSize(context, -1, &tokens) == SQLITE_OK,
              api.xColumnSize(context, -1, &length) == SQLITE_OK, api.xInstCount(context, &instances) == SQLITE_OK else {
            sqlite3_result_error(result, "galley_rank: FTS5 gave no statistics", -1)
            return
        }
        let phrases = Int(api.xPhraseCount(context))
        var frequency = [Double](repeating: 0, count: phrases)
        for index in 0..<instances {
            var phrase: Int32 = 0
            var column: Int32 = 0
            var offset: Int32 = 0
            guard api.xInst(context, index, &phrase, &column, &offset) == SQLITE_OK else { continue }
            frequency[Int(phrase)] += argument(Int(column)) ?? 1
        }
        let (k1, b) = (1.2, 0.75)
        let average = rows > 0 ? Double(tokens) / Double(rows) : 0
        let norm = k1 * (1 - b + b * Double(length) / (average > 0 ? average : 1))
        var score = 0.0
        for phrase in 0..<phrases {
            let hits = argument(columns + phrase) ?? 0
            var idf = log((Double(rows) - hits + 0.5) / (hits + 0.5))
            if idf <= 0 { idf = 1e-6 }
            score += idf * (frequency[phrase] * (k1 + 1)) / (frequency[phrase] + norm)
        }
        sqlite3_result_double(result, -score)
    }
}
