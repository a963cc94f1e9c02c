import Foundation
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit
import PostgresNIO

// Search, the sync records, independent articles, and the store's upkeep (delete, check, gc).
extension PostgresStore {
    // MARK: Search

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
            // index when few do). As a value computed inside the statement it could not (every
            // search got the GIN index and sorted all its matches: 68 ms for 30,000 of them).
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

    // MARK: What sync records

    public func followedFeed(_ url: String) throws -> FollowedFeed? {
        try read { connection in
            try connection.rows("SELECT url, etag, revision, synced_at, expires FROM sync_feed WHERE url = \(url)", logger).first.map {
                FollowedFeed(url: try $0.string("url"), etag: try $0.optionalString("etag"), revision: try $0.int("revision"),
                             syncedAt: try $0.string("synced_at"), expires: try $0.optionalString("expires"))
            }
        }
    }

    public func recordFollowedFeed(_ feed: FollowedFeed) throws {
        try writing { connection in
            try connection.run("""
                INSERT INTO sync_feed (url, etag, revision, synced_at, expires)
                VALUES (\(feed.url), \(feed.etag), \(feed.revision), \(feed.syncedAt), \(feed.expires))
                ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, revision = excluded.revision, synced_at = excluded.synced_at,
                    expires = excluded.expires
                """, logger)
        }
    }

    public func refusedPackage(_ sha256: String) throws -> RefusedPackage? {
        try read { connection in
            try connection.rows("SELECT sha256, apple_id, message, refused_at FROM sync_refused WHERE sha256 = \(sha256)", logger).first.map {
                RefusedPackage(sha256: try $0.string("sha256"), appleID: try $0.string("apple_id"), message: try $0.string("message"),
                               refusedAt: try $0.string("refused_at"))
            }
        }
    }

    public func recordRefusedPackage(_ refused: RefusedPackage) throws {
        try writing { connection in
            try connection.run("""
                INSERT INTO sync_refused (sha256, apple_id, message, refused_at)
                VALUES (\(refused.sha256), \(refused.appleID), \(refused.message), \(refused.refusedAt))
                ON CONFLICT (sha256) DO UPDATE SET apple_id = excluded.apple_id, message = excluded.message, refused_at = excluded.refused_at
                """, logger)
        }
    }

    // MARK: Independent articles

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
                    let dateMS = article.date.flatMap { try? Date($0, strategy: .iso8601) }.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
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

    // MARK: Upkeep

    /// Removes an issue's rows, and the blobs no other row names.
    public func delete(_ id: String) throws -> StoredIssue {
        try writing { connection in
            let issue = try issueSummary(id, connection)
            let deleted = try transaction(connection) { () -> Bool in
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
            // file count but the problems, put back in issue and name order after. At 30,000
            // articles (60,002 files) the rows read whole and a table of every blob verified took
            // the check to 91 MB.
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
    /// through: a selective search right after the bench's 100-issue load took 20 ms (a scan
    /// of every article), 3 ms after this (~0.3 s at 30,000 articles).
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
