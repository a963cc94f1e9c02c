import Foundation
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit
import PostgresNIO

// Full-text search.
extension PostgresStore {
    /// Full-text search with PostgreSQL's own machinery: a weighted `tsvector` per article (title
    /// A, dek and keywords B, body D; `simple` configuration over `unaccent`, so "cafe" finds
    /// "café"), a GIN index, a `tsquery` Galley builds itself for words and `websearch_to_tsquery`
    /// for quoted phrases (`searchParts(_:)`), ranked by
    /// `ts_rank_cd` with weights in the SQLite store's proportions. That ranking is PostgreSQL's
    /// cover density, not BM25: the set of matches is the same as SQLite's, the order may differ.
    public func search(_ text: String, options: SearchOptions) throws -> SearchResults {
        try snapshot { connection in
            let issueID = try options.issue.map { try issueSummary($0, connection).globalID }
            let parts = Self.searchParts(text)
            guard options.limit > 0, parts.words != nil || parts.phrases != nil else {
                return SearchResults(articles: [], rankedOnlyMostRecent: nil)
            }
            // Words through Galley's own tsquery (prefixes), phrases through PostgreSQL's
            // websearch_to_tsquery (which never fails on what a reader types), made into one
            // query first: the search below then carries it as a constant, which lets the
            // planner estimate how many articles match and pick its plan by that (a walk back
            // through the newest articles when most match, stopping at the rank limit; the GIN
            // index when few do). As a value computed inside the statement it could not: every
            // search took the GIN index and sorted all its matches, slowest for the broadest.
            var made = PostgresFilter()
            let expression = [parts.words.map { "to_tsquery('simple', unaccent(\(made.bind($0))))" },
                              parts.phrases.map { "websearch_to_tsquery('simple', unaccent(\(made.bind($0))))" }]
                .compactMap { $0 }.joined(separator: " && ")
            let query = try connection.rows(PostgresQuery(unsafeSQL: "SELECT (\(expression))::text AS query", binds: made.binds), logger)
                .first.map { try $0.string("query") } ?? ""
            // Words that are only punctuation to PostgreSQL's parser leave no lexeme: no match.
            guard !query.isEmpty else { return SearchResults(articles: [], rankedOnlyMostRecent: nil) }
            var filter = PostgresFilter()
            let tsquery = "\(filter.bind(query))::tsquery"
            filter.add("a.search @@ \(tsquery)")
            if let issueID { filter.add("a.issue_id = (SELECT id FROM issue WHERE global_id = \(filter.bind(issueID)))") }
            // Only the most recently imported `rankLimit` matches are ranked, as in SQLite: one
            // more is fetched to learn whether any were left out.
            let rankLimit = options.rankLimit.flatMap { $0 > 0 ? $0 : nil }
            let (open, close) = (String(SearchText.open), String(SearchText.close))
            let snippetOptions = filter.bind("StartSel=\(open), StopSel=\(close), MaxWords=12, MinWords=4, ShortWord=0, MaxFragments=1, FragmentDelimiter=\" … \"")
            let titleOptions = filter.bind("StartSel=\(open), StopSel=\(close), HighlightAll=true")
            let limit = filter.bind(Int64(options.limit))
            let newest = rankLimit.map { " ORDER BY a.id DESC LIMIT \(filter.bind(Int64($0) + 1))" } ?? ""
            let ranked = rankLimit.map { " ORDER BY id DESC LIMIT \(filter.bind(Int64($0)))" } ?? ""
            let rows = try connection.rows(PostgresQuery(unsafeSQL: """
                WITH matches AS (SELECT a.id, a.search FROM article a\(filter.whereSQL)\(newest)),
                best AS (
                    SELECT id, ts_rank_cd('{0.1, 0.2, 0.5, 1.0}', search, \(tsquery)) AS rank
                    FROM (SELECT id, search FROM matches\(ranked)) m
                    ORDER BY rank DESC, id LIMIT \(limit))
                SELECT \(Self.articleColumns), (SELECT count(*) FROM matches) AS matched,
                    ts_headline('simple', a.search_body, \(tsquery), \(snippetOptions)) AS marked_snippet,
                    ts_headline('simple', a.title, \(tsquery), \(titleOptions)) AS marked_title
                FROM best JOIN article a ON a.id = best.id JOIN issue i ON i.id = a.issue_id
                ORDER BY best.rank DESC, a.id
                """, binds: filter.binds), logger)
            let matched = try rows.first.map { try $0.int("matched") } ?? 0
            let articles = try rows.map { row -> StoredArticle in
                var article = try Self.article(row)
                let snippet = SearchText.unmark(try row.string("marked_snippet"))
                let title = SearchText.unmark(try row.string("marked_title"))
                article.snippet = snippet.text
                article.highlights = title.ranges.map { SearchHighlight(field: .title, start: $0.start, length: $0.length) }
                    + snippet.ranges.map { SearchHighlight(field: .snippet, start: $0.start, length: $0.length) }
                return article
            }
            return SearchResults(articles: articles, rankedOnlyMostRecent: rankLimit.flatMap { matched > Int64($0) ? $0 : nil })
        }
    }

    /// What a search for `text` asks: the words outside double quotes as a `tsquery` built here,
    /// so user text never reaches PostgreSQL's query parser raw (each word must match as a prefix,
    /// `'harb':*`; terms are runs of letters and digits only, so nothing in them is syntax; a word
    /// PostgreSQL's parser splits must match as its parts in a row, `carpet-ba` as
    /// `'carpet' <-> 'ba':*`, and a possessive or contraction whole, `'queequeg' <-> 's'`, not
    /// "Queequeg stared", so it reads as one word, as in the SQLite store); and the words inside
    /// double quotes (straight or curly; an unclosed one runs to the end) as quoted phrases for
    /// `websearch_to_tsquery` (`"call me ishmael"`: those words, in that order). Nil for a part
    /// with no words.
    static func searchParts(_ text: String) -> (words: String?, phrases: String?) {
        func pieces(_ word: Substring) -> [String] {
            word.split(whereSeparator: { !($0.isLetter || $0.isNumber) }).map { $0.lowercased() }
        }
        var groups: [String] = []
        var phrases: [String] = []
        var seen = Set<String>()
        for (index, part) in text.split(omittingEmptySubsequences: false, whereSeparator: { "\"“”„".contains($0) }).enumerated() {
            if index % 2 == 1 {
                let words = pieces(part)
                if !words.isEmpty { phrases.append("\"" + words.joined(separator: " ") + "\"") }
                continue
            }
            for word in part.split(whereSeparator: \.isWhitespace) {
                let parts = pieces(word)
                guard !parts.isEmpty else { continue }
                let apostrophe = word.contains("'") || word.contains("\u{2019}")
                let group = parts.count == 1 ? "'\(parts[0])':*"
                    : "(" + parts.dropLast().map { "'\($0)'" }.joined(separator: " <-> ")
                        + " <-> '\(parts[parts.count - 1])'\(apostrophe ? "" : ":*"))"
                if seen.insert(group).inserted { groups.append(group) }
            }
        }
        return (groups.isEmpty ? nil : groups.joined(separator: " & "), phrases.isEmpty ? nil : phrases.joined(separator: " "))
    }
}
