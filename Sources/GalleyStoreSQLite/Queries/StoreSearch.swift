import Foundation
import GRDB
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit

extension SQLiteStore {
    /// A word of a search longer than this many vocabulary terms is left to FTS5's own prefix
    /// query instead of being spelled out as `(t1 OR t2 …)`.
    static let prefixExpansionLimit = 64

    /// Full-text search over titles, deks, keywords and body text (FTS5): every word must match,
    /// as a word prefix, and every quoted phrase as those words in a row; ranked by BM25 (title
    /// 10, dek 5, keywords 5, body 1; `SearchRank`), with a one-line snippet and the matched words' offsets.
    ///
    /// The work is bounded so a broad query costs about what a narrow one does: each word is
    /// expanded to the index's own terms (FTS5 prefix queries build a merged doclist on every
    /// statement), ranking runs on the full-text index alone, and only the best `limit` rows are
    /// joined and given snippets, each in one statement.
    public func search(_ text: String, options: SearchOptions = SearchOptions()) throws -> SearchResults {
        try database.read { db in
            let issueID = try options.issue.map { try issueSummary($0, db).globalID }
            guard options.limit > 0, let (pattern, phrases) = try Self.searchQuery(text, db) else {
                return SearchResults(articles: [], rankedOnlyMostRecent: nil)
            }
            // Matches are read between two rowids: all of them, or an issue's articles, which one
            // writer inserts in one transaction, so their ids are one range the full-text index
            // can seek (the join keeps the filter exact); the rank limit then raises the lower one.
            var lower = Int64.min
            var upper = Int64.max
            var onlyIssue = (join: "", filter: "", arguments: StatementArguments())
            if let issueID {
                let range = try Row.fetchOne(db, sql: """
                    SELECT MIN(a.id) AS lower, MAX(a.id) AS upper FROM article a JOIN issue i ON i.id = a.issueId
                    WHERE i.globalID = ?
                    """, arguments: [issueID])
                guard let low: Int64 = range?["lower"], let high: Int64 = range?["upper"] else {
                    return SearchResults(articles: [], rankedOnlyMostRecent: nil)
                }
                (lower, upper) = (low, high)
                onlyIssue = (" JOIN article a ON a.id = articleSearch.rowid JOIN issue i ON i.id = a.issueId",
                             " AND i.globalID = ?", [issueID])
            }

            var ranked: Int?
            var matched: Int?
            if let rankLimit = options.rankLimit, rankLimit > 0 {
                // More matches than the limit when there is one after the limit-th newest: rank
                // from the limit-th newest on. The newest ids themselves, not only that one: a
                // search that matches nothing ends here, and one of fewer matches knows how many.
                let newest = try Int64.fetchAll(db, sql: """
                    SELECT articleSearch.rowid FROM articleSearch
                    WHERE articleSearch MATCH ? AND articleSearch.rowid BETWEEN ? AND ?
                    ORDER BY articleSearch.rowid DESC LIMIT ?
                    """, arguments: [pattern, lower, upper, rankLimit + 1])
                if newest.isEmpty { return SearchResults(articles: [], rankedOnlyMostRecent: nil) }
                if newest.count > rankLimit {
                    lower = max(lower, newest[rankLimit - 1])
                    ranked = rankLimit
                } else if issueID == nil {
                    matched = newest.count
                }
            }

            // BM25 with each phrase's article count given (`SearchRank`): bm25() would count
            // every match of every phrase in the store first. A search of one phrase over the
            // whole store has just counted its matches (a phrase of common words that seldom
            // meet is one walk through every article holding them: made once, not twice).
            let counts: [Double]
            if phrases == [pattern], let matched {
                counts = [Double(matched)]
            } else {
                counts = try SearchRank.counts(phrases, db)
            }
            let best = try Int64.fetchAll(db, sql: """
                SELECT articleSearch.rowid FROM articleSearch\(onlyIssue.join)
                WHERE articleSearch MATCH ? AND articleSearch.rowid BETWEEN ? AND ?\(onlyIssue.filter)
                ORDER BY \(SearchRank.name)(articleSearch, 10.0, 5.0, 5.0, 1.0\(String(repeating: ", ?", count: counts.count))),
                    articleSearch.rowid LIMIT ?
                """, arguments: [pattern, lower, upper] + onlyIssue.arguments + StatementArguments(counts) + [options.limit])

            guard let first = best.min(), let last = best.max() else {
                return SearchResults(articles: [], rankedOnlyMostRecent: ranked)
            }
            // The best rows and their snippets, each in one statement: snippets from one pass over
            // the matches between the best ids (`+` keeps the id list out of the full-text index,
            // which would otherwise run the whole query once per id).
            let ids = "[" + best.map(String.init).joined(separator: ",") + "]"
            var rows: [Int64: StoredArticle] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT a.id AS rowID, \(Self.articleColumns) FROM article a JOIN issue i ON i.id = a.issueId
                WHERE a.id IN (SELECT value FROM json_each(?))
                """, arguments: [ids]) {
                rows[row["rowID"]] = try StoredArticle(row: row)
            }
            let (open, close) = (String(SearchText.open), String(SearchText.close))
            for row in try Row.fetchAll(db, sql: """
                SELECT articleSearch.rowid AS rowID, snippet(articleSearch, 3, ?, ?, '…', 12) AS snippet,
                       highlight(articleSearch, 0, ?, ?) AS title FROM articleSearch
                WHERE articleSearch MATCH ? AND articleSearch.rowid BETWEEN ? AND ?
                AND +articleSearch.rowid IN (SELECT value FROM json_each(?))
                """, arguments: [open, close, open, close, pattern, first, last, ids]) {
                let rowID: Int64 = row["rowID"]
                let snippet = SearchText.unmark(row["snippet"] ?? "")
                // The indexed title has as many scalars as the stored one (SearchText.field), so
                // its offsets are the title's.
                let title = SearchText.unmark(row["title"] ?? "")
                rows[rowID]?.snippet = snippet.text
                rows[rowID]?.highlights = title.ranges.map { SearchHighlight(field: .title, start: $0.start, length: $0.length) }
                    + snippet.ranges.map { SearchHighlight(field: .snippet, start: $0.start, length: $0.length) }
            }
            let articles = best.compactMap { rows[$0] }
            return SearchResults(articles: articles, rankedOnlyMostRecent: ranked)
        }
    }

    /// The FTS5 query for `text`. Words outside double quotes must each match as a prefix: a
    /// word is spelled out as the index terms it prefixes (`("harbour" OR "harbours")`), which
    /// FTS5 evaluates lazily; one that prefixes more than `prefixExpansionLimit` terms stays a
    /// prefix query. Words inside double quotes ("call me ishmael", straight or curly) must
    /// match as a phrase: those exact words, in that order. Nil when a word matches no term at
    /// all (nothing can match) or there are no words. Terms are quoted, so words such as `NOT`
    /// are searched, not parsed. The text is normalised as the index is (SearchText).
    static func searchPattern(_ text: String, _ db: Database) throws -> String? { try searchQuery(text, db)?.pattern }

    /// `searchPattern`, with each of its FTS5 phrases on its own, in the order FTS5 numbers
    /// them (left to right), for `SearchRank.counts`.
    static func searchQuery(_ text: String, _ db: Database) throws -> (pattern: String, phrases: [String])? {
        let tokenizer = try db.makeTokenizer(SearchText.tokenizer)
        func tokens(_ part: String) throws -> [String] {
            try tokenizer.tokenize(query: SearchText.field(part)).filter { !$0.flags.contains(.colocated) }.map(\.token)
        }
        var words: [String] = []
        var phrases: [[String]] = []
        for (index, part) in text.split(omittingEmptySubsequences: false, whereSeparator: { "\"“”„".contains($0) }).enumerated() {
            // Odd parts lie between quotes (an unclosed quote runs to the end).
            if index % 2 == 1 {
                let phrase = try tokens(String(part))
                if !phrase.isEmpty { phrases.append(phrase) }
            } else {
                words += try tokens(String(part))
            }
        }
        guard !words.isEmpty || !phrases.isEmpty else { return nil }
        // One seek per term: the next term at or after `from` that still starts with the word.
        let next = try db.cachedStatement(sql: """
            SELECT term FROM articleSearchTerms WHERE term >= ? AND term <= ? LIMIT 1
            """)
        var groups: [String] = []
        var each: [String] = []
        for word in Set(words).sorted() {
            // U+10FFFF sorts after every character a term can continue with (terms compare as UTF-8
            // bytes); U+0001 after the term itself, since tokens never hold control characters.
            let last = word + "\u{10FFFF}"
            var found: [String] = []
            var from = word
            while found.count <= prefixExpansionLimit,
                  let term = try String.fetchOne(next, arguments: [from, last]), term.utf8.starts(with: word.utf8) {
                found.append(term)
                from = term + "\u{1}"
            }
            if found.isEmpty { return nil }
            if found.count > prefixExpansionLimit {
                groups.append(quoted(word) + "*")
                each.append(quoted(word) + "*")
            } else if found.count == 1 {
                groups.append(quoted(found[0]))
                each.append(quoted(found[0]))
            } else {
                groups.append("(" + found.map(quoted).joined(separator: " OR ") + ")")
                each += found.map(quoted)
            }
        }
        for phrase in phrases {
            groups.append(phrase.map(quoted).joined(separator: " + "))
            each.append(phrase.map(quoted).joined(separator: " + "))
        }
        return (groups.joined(separator: " AND "), each)
    }

    private static func quoted(_ term: String) -> String {
        "\"" + term.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
