import Foundation
import GalleyTestSupport
import GRDB
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit
@testable import GalleyStore
@testable import GalleyStorePostgres
@testable import GalleyStoreSQLite

/// Search on every backend (the same matches; PostgreSQL ranks by cover density, not BM25, and
/// the cases here hold for both), and the SQLite store's read-only access, on small issues
/// packed and imported for each test.
@Suite struct StoreSearchTests {
    init() { ProcessEnvironment.configureForArchives() }

    struct Article {
        var title: String
        var body: String
        var keywords: [String] = []
    }

    func temporaryFolder() throws -> URL {
        let url = Scratch.path("galley-search")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    typealias Backend = StoreConformanceTests.Backend

    /// A new store of `backend`: the writer that imports, and a reader opened read-only.
    func stores(_ backend: Backend) throws -> (writer: any IssueStore, reader: () throws -> any IssueStore) {
        let (location, environment) = try backend.makeLocation()
        let writer = try StoreLocation.open(location, access: .create, environment: environment)
        return (writer, { try StoreLocation.open(location, access: .read, environment: environment) })
    }

    /// Packs an issue of `articles` and imports it into the store at `store`.
    func importIssue(_ appleID: String, _ articles: [Article], into store: URL) throws {
        try importIssue(appleID, articles, into: try SQLiteStore(at: store))
    }

    /// Packs an issue of `articles` and imports it into `store` (as a version of
    /// `lastUpdated` milliseconds, when given).
    func importIssue(_ appleID: String, _ articles: [Article], into store: any IssueStore, lastUpdated: Int64? = nil) throws {
        let source = try temporaryFolder().appending(path: appleID)
        try FileManager.default.createDirectory(at: source.appending(path: "articles"), withIntermediateDirectories: true)
        try Data("title: \(appleID)\napple_id: \(appleID)\npublish_date: 2026-01-01\n".utf8)
            .write(to: source.appending(path: "issue.yaml"))
        for (index, article) in articles.enumerated() {
            let folder = source.appending(path: "articles/\(String(format: "%02d", index + 1))-a\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let keywords = article.keywords.isEmpty ? "" : "keywords: [\(article.keywords.joined(separator: ", "))]\n"
            try Data("---\ntitle: \(article.title)\n\(keywords)---\n\(article.body)\n".utf8)
                .write(to: folder.appending(path: "article.md"))
        }
        var options = PackOptions(source: source, output: try temporaryFolder())
        options.lastUpdated = lastUpdated
        let summary = try Packer().pack(options)
        _ = try store.importZip(summary.path, force: false)
    }

    /// Every word the index holds, where (`articleSearchTerms`: term, article, column, offset),
    /// and the same after the index is built again from the articles (undone after). The index
    /// keeps no copy of its text (v12), so an article's words are taken out with the text its
    /// row makes then: a step that got this wrong leaves words a rebuild would not have.
    func indexAndItsRebuild(_ store: SQLiteStore) throws -> (index: [String], rebuilt: [String]) {
        let words = "SELECT term, doc, col, offset FROM articleSearchTerms ORDER BY doc, col, offset"
        func read(_ db: Database) throws -> [String] {
            try Row.fetchAll(db, sql: words).map { "\($0["term"] as String) \($0["doc"] as Int64) \($0["col"] as String) \($0["offset"] as Int)" }
        }
        var result: (index: [String], rebuilt: [String]) = ([], [])
        try store.write { db in
            try db.inSavepoint {
                result.index = try read(db)
                try SearchText.rebuild(db)
                result.rebuilt = try read(db)
                return .rollback
            }
        }
        return result
    }

    /// The index without a copy of its text (v12) stays what a rebuild makes through imports,
    /// a newer version replacing an issue, and a deletion; a search finds what is there and
    /// nothing that is gone; an article whose row went without its words (what an older
    /// Galley's bug could leave) is found by `store check` and mended by `store gc`.
    @Test func theIndexStaysWhatARebuildMakesThroughImportsReplacementsAndDeletions() throws {
        let root = try temporaryFolder().appending(path: "store")
        let store = try SQLiteStore(at: root)
        try importIssue("org.example.a", [
            Article(title: "Harbour lights", body: "Boats come in &amp; <b>go</b>.", keywords: ["sea"]),
            Article(title: "Queequeg\u{2019}s harpoon", body: "The café at the pier."),
        ], into: store, lastUpdated: 1_767_225_600_000)
        try importIssue("org.example.b", [Article(title: "Inland", body: "No water here.")], into: store)
        var state = try indexAndItsRebuild(store)
        #expect(state.index.count > 15)
        #expect(state.index == state.rebuilt)
        // A newer version of the first issue replaces its articles (the old words go).
        try importIssue("org.example.a", [Article(title: "Lighthouse", body: "Fog and lamps.")], into: store,
                        lastUpdated: 1_767_225_600_000 + 86_400_000)
        state = try indexAndItsRebuild(store)
        #expect(state.index == state.rebuilt)
        #expect(titles(try store.search("harbour")).isEmpty)
        #expect(titles(try store.search("lamps")) == ["Lighthouse"])
        _ = try store.delete("org.example.b")
        state = try indexAndItsRebuild(store)
        #expect(state.index == state.rebuilt)
        #expect(titles(try store.search("water")).isEmpty)
        #expect(try store.check().problems.isEmpty)
        // The replaced and the deleted issue's rows are gone from every table (`deleteRows`
        // removes them table by table, not through the foreign keys' cascade).
        let left = try store.database.read { db in
            try ["issue", "article", "asset", "file"].map { table in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table) WHERE \(table == "issue" ? "id" : "issueId") NOT IN (SELECT id FROM issue WHERE appleID = 'org.example.a')") ?? -1
            }
        }
        #expect(left == [0, 0, 0, 0])
        #expect(try store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM file") ?? 0 } > 0)
        #expect(try store.database.read { db in try Row.fetchAll(db, sql: "PRAGMA foreign_key_check") }.isEmpty)

        try store.write { db in try db.execute(sql: "DELETE FROM article WHERE title = 'Lighthouse'") }
        #expect(try store.check().problems == ["database: 1 rows belong to no issue"])
        #expect(try store.collectGarbage() == ["1 search rows"])
        state = try indexAndItsRebuild(store)
        #expect(state.index.isEmpty && state.rebuilt.isEmpty)
        #expect(try store.check().problems.isEmpty)
    }

    /// A store whose index was built under another version of `SearchText` (one that made
    /// other text, which would take the wrong words out) is rebuilt when opened, even to read.
    @Test func anIndexBuiltUnderAnotherSearchTextIsRebuiltWhenTheStoreIsOpened() throws {
        let root = try temporaryFolder().appending(path: "store")
        try importIssue("org.example.a", [Article(title: "Harbour lights", body: "Boats come in.")], into: root)
        try SQLiteStore(at: root).write { db in
            try db.execute(sql: "INSERT INTO articleSearch (articleSearch) VALUES ('delete-all')")
            try db.execute(sql: "PRAGMA user_version = \(SearchText.version + 1)")
        }
        let opened = try SQLiteStore(at: root, access: .read)
        #expect(opened.access == .write, "opened for writing, to rebuild")
        #expect(titles(try opened.search("boats")) == ["Harbour lights"])
        #expect(try opened.database.read(SearchText.indexedVersion) == SearchText.version)
        #expect(try SQLiteStore(at: root, access: .read).access == .read)
    }

    func titles(_ results: SearchResults) -> [String] { results.articles.map(\.title) }

    @Test(arguments: Backend.allCases)
    func everyWordMatchesAsAPrefixInAnyCaseAndWithOrWithoutAccents(backend: Backend) throws {
        let (store, reader) = try stores(backend)
        try importIssue("org.example.a", [
            Article(title: "Harbour lights", body: "Boats come in."),
            Article(title: "Two harbours", body: "The café at the pier."),
            Article(title: "Inland", body: "No water here."),
        ], into: store)
        let opened = try reader()
        #expect(Set(titles(try opened.search("HARB"))) == ["Harbour lights", "Two harbours"])
        #expect(titles(try opened.search("harb cafe")) == ["Two harbours"], "every word must match")
        #expect(titles(try opened.search("Café")) == ["Two harbours"])
        #expect(titles(try opened.search("harb nowhere")).isEmpty, "a word no term starts with matches nothing")
        #expect(titles(try opened.search("   ")).isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func searchWordsAreNeverParsedAsQuerySyntax(backend: Backend) throws {
        let (store, reader) = try stores(backend)
        try importIssue("org.example.a", [Article(title: "Not or and", body: "near \"quoted\" words")], into: store)
        let opened = try reader()
        for text in ["NOT", "OR and", "\"", "near(", "quoted\" NOT", "title:not", "*", "^not", "-or"] {
            #expect(throws: Never.self, "\(text)") { try opened.search(text) }
        }
        #expect(titles(try opened.search("NOT OR AND")) == ["Not or and"])
    }

    @Test(arguments: Backend.allCases)
    func aTitleMatchRanksAboveABodyMatchAndEachResultHasASnippet(backend: Backend) throws {
        let (store, reader) = try stores(backend)
        try importIssue("org.example.a", [
            Article(title: "Weather", body: "The lighthouse keeper wrote about fog and the lighthouse lamp."),
            Article(title: "The lighthouse", body: "A short piece."),
            Article(title: "Keywords only", body: "Nothing to see.", keywords: ["lighthouse"]),
        ], into: store)
        let results = try reader().search("lighthouse")
        #expect(titles(results) == ["The lighthouse", "Keywords only", "Weather"])
        let weather = try #require(results.articles.last)
        let snippet = try #require(weather.snippet)
        let marked = (weather.highlights ?? []).filter { $0.field == .snippet }.map { range in
            String(String.UnicodeScalarView(snippet.unicodeScalars.dropFirst(range.start).prefix(range.length)))
        }
        #expect(marked == ["lighthouse", "lighthouse"], "offsets in scalars point at the matched words: \(snippet)")
        #expect(!snippet.contains("[") && !snippet.contains("\u{E000}"))
        let title = try #require(results.articles.first?.highlights?.first { $0.field == .title })
        #expect((title.start, title.length) == (4, 10), "The lighthouse")
        #expect(results.rankedOnlyMostRecent == nil)
    }

    /// The issue's cases: a quoted phrase matches only the words together; a possessive is one
    /// word; accents fold both ways; snippets are one line, with entities decoded.
    @Test(arguments: Backend.allCases)
    func phrasesPossessivesAndAccentsReadAsAReaderMeansThem(backend: Backend) throws {
        let (store, reader) = try stores(backend)
        try importIssue("org.example.moby", [
            Article(title: "Loomings", body: "Call me Ishmael. Some years ago, never mind how long precisely."),
            Article(title: "The Carpet-Bag", body: "Ishmael stuffed a shirt or two. Call the landlord, he said to me."),
            Article(title: "The Spouter-Inn", body: "Queequeg\u{2019}s harpoon stood in the corner."),
            Article(title: "The Counterpane", body: "Queequeg stared, and so did I.\n\nThe next morning &amp; after."),
            Article(title: "Crème brûlée", body: "A café on the quay; the \"Pequod\" sailed at noon."),
        ], into: store)
        let opened = try reader()
        #expect(titles(try opened.search("\"call me ishmael\"")) == ["Loomings"], "a phrase, not three words anywhere")
        #expect(titles(try opened.search("\u{201C}Call me Ishmael\u{201D}")) == ["Loomings"], "curly quotes too")
        #expect(Set(titles(try opened.search("call me ishmael"))) == ["Loomings", "The Carpet-Bag"], "without quotes: every word")
        #expect(titles(try opened.search("Queequeg's")) == ["The Spouter-Inn"], "the possessive is one word, straight or curly")
        #expect(titles(try opened.search("Queequeg\u{2019}s")) == ["The Spouter-Inn"])
        #expect(Set(titles(try opened.search("Queequeg"))) == ["The Spouter-Inn", "The Counterpane"])
        #expect(titles(try opened.search("creme brulee")) == ["Crème brûlée"])
        #expect(titles(try opened.search("CAFÉ")) == ["Crème brûlée"])
        #expect(titles(try opened.search("pequod")) == ["Crème brûlée"], "a word in quotation marks is a word")
        let counterpane = try #require(try opened.search("morning").articles.first?.snippet)
        #expect(!counterpane.contains("\n") && counterpane.contains("morning & after"), "\(counterpane)")
        #expect(titles(try opened.search("\"me call\"")).isEmpty, "a phrase keeps its order")
        #expect(titles(try opened.search("\"unclosed phrase")).isEmpty)
    }

    @Test func aWordPrefixingManyTermsStaysAPrefixQuery() throws {
        let store = try temporaryFolder().appending(path: "store")
        let terms = (0..<(SQLiteStore.prefixExpansionLimit + 16)).map { "zeta\($0)" }
        try importIssue("org.example.a", [
            Article(title: "Many", body: terms.joined(separator: " ")),
            Article(title: "One", body: "zeta7 only"),
        ], into: store)
        // The store held while its connections are used: it closes them when it goes.
        let reader = try SQLiteStore(at: store, access: .read)
        let pattern = try reader.database.read { db in try SQLiteStore.searchPattern("zeta", db) }
        #expect(pattern == "\"zeta\"*")
        let narrow = try reader.database.read { db in try SQLiteStore.searchPattern("zeta7", db) }
        #expect(narrow == "(" + (["\"zeta7\""] + (70..<80).map { "\"zeta\($0)\"" }).joined(separator: " OR ") + ")")
        #expect(Set(titles(try SQLiteStore(at: store, access: .read).search("zeta"))) == ["Many", "One"])
    }

    /// `galley_rank` with every phrase counted exactly is FTS5's bm25(), score for score (so
    /// the ranking is bm25's); past `SearchRank.countLimit` matches a count is estimated from
    /// where the limit-th newest match lies.
    @Test func theRankIsBM25WithThePhrasesCountsGiven() throws {
        let store = try temporaryFolder().appending(path: "store")
        try importIssue("org.example.a", [
            Article(title: "Harbour lights", body: "The harbour at night, and the ferry."),
            Article(title: "Ferry", body: "A ferry crosses the harbour; the harbour master waves.", keywords: ["harbour"]),
            Article(title: "Night shift", body: "At night the harbour is quiet. Lights at the harbour mouth."),
            Article(title: "Elsewhere", body: "Nothing of that here."),
        ], into: store)
        let reader = try SQLiteStore(at: store, access: .read)
        for text in ["harbour", "harbour night", "\"the harbour\" ferry", "harb"] {
            try reader.database.read { db in
                let (pattern, phrases) = try #require(try SQLiteStore.searchQuery(text, db))
                let counts = try SearchRank.counts(phrases, db)
                let rows = try Row.fetchAll(db, sql: """
                    SELECT bm25(articleSearch, 10.0, 5.0, 5.0, 1.0) AS bm25,
                        galley_rank(articleSearch, 10.0, 5.0, 5.0, 1.0\(String(repeating: ", ?", count: counts.count))) AS rank
                    FROM articleSearch WHERE articleSearch MATCH ?
                    """, arguments: StatementArguments(counts) + [pattern])
                #expect(!rows.isEmpty, "\(text)")
                for row in rows { #expect((row["rank"] as Double) == (row["bm25"] as Double), "\(text): \(row)") }
            }
        }
        // Past the limit: the newest `countLimit` matches span a share of the article ids, and
        // the count is the limit over that share.
        let many = try temporaryFolder().appending(path: "many")
        try importIssue("org.example.many", (0..<400).map {
            Article(title: "Piece \($0)", body: $0 % 2 == 0 ? "common word" : "other text")
        }, into: many)
        let manyReader = try SQLiteStore(at: many, access: .read)
        let counted = try manyReader.database.read { db in
            try SearchRank.counts(["\"common\"", "\"piece\"", "\"other\""], limit: 50, db)
        }
        #expect(abs(counted[0] - 200) < 4 && counted[1] == 400 && abs(counted[2] - 200) < 4, "\(counted)")
        #expect(try manyReader.database.read { db in try SearchRank.counts(["\"common\""], db) } == [200])
    }

    @Test(arguments: Backend.allCases)
    func overTheRankLimitOnlyTheMostRecentlyImportedMatchesAreRanked(backend: Backend) throws {
        let (store, reader) = try stores(backend)
        // The older issue has the better match (the word in the title); the newer ones only in bodies.
        try importIssue("org.example.old", [Article(title: "Ferry", body: "ferry")], into: store)
        try importIssue("org.example.new", [
            Article(title: "One", body: "a ferry"), Article(title: "Two", body: "the ferry"),
        ], into: store)
        let opened = try reader()
        var capped = SearchOptions()
        capped.rankLimit = 2
        let few = try opened.search("ferry", options: capped)
        #expect(few.rankedOnlyMostRecent == 2)
        #expect(Set(titles(few)) == ["One", "Two"])

        var all = SearchOptions()
        all.rankLimit = nil
        let every = try opened.search("ferry", options: all)
        #expect(every.rankedOnlyMostRecent == nil)
        #expect(titles(every).first == "Ferry")
        #expect(every.articles.count == 3)

        capped.rankLimit = 3
        #expect(try opened.search("ferry", options: capped).rankedOnlyMostRecent == nil, "exactly the limit: all ranked")
    }

    @Test(arguments: Backend.allCases)
    func theIssueFilterIsExactAndAnUnknownIssueIsAnError(backend: Backend) throws {
        let (store, reader) = try stores(backend)
        try importIssue("org.example.a", [Article(title: "A ferry", body: "x")], into: store)
        try importIssue("org.example.b", [Article(title: "B ferry", body: "x"), Article(title: "B2 ferry", body: "y")], into: store)
        try importIssue("org.example.c", [Article(title: "C ferry", body: "x")], into: store)
        let opened = try reader()
        #expect(Set(titles(try opened.search("ferry", options: SearchOptions(issue: "org.example.b")))) == ["B ferry", "B2 ferry"])
        var limited = SearchOptions(issue: "org.example.b")
        limited.rankLimit = 1
        #expect(try opened.search("ferry", options: limited).articles.count == 1)
        #expect(throws: GalleyError.self) { try opened.search("ferry", options: SearchOptions(issue: "org.example.nope")) }
        #expect(try opened.search("ferry", options: SearchOptions(limit: 2)).articles.count == 2)
    }

    @Test func readingNeverWritesTheDatabaseButStillCleansLeftovers() throws {
        let store = try temporaryFolder().appending(path: "store")
        try importIssue("org.example.a", [Article(title: "Ferry", body: "x")], into: store)
        let database = store.appending(path: "store.sqlite")
        let before = try Data(contentsOf: database)
        try FileManager.default.createDirectory(at: store.appending(path: "staging/123-interrupted"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: store.appending(path: "issues/org.example.z.999"), withIntermediateDirectories: true)

        let opened = try SQLiteStore(at: store, access: .read)
        #expect(opened.access == .read)
        #expect(try opened.issues().map(\.appleID) == ["org.example.a"])
        #expect(titles(try opened.search("ferry")) == ["Ferry"])
        #expect(try Data(contentsOf: database) == before)
        // Nothing went to the write-ahead log either (opening a pool writes a dummy transaction there).
        let wal = FileStatus(store.appending(path: "store.sqlite-wal").path)
        #expect(wal == nil || wal?.size == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.appending(path: "staging").path).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.appending(path: "issues").path).count == 1)
    }

    @Test func readingOrMaintainingAStoreThatDoesNotExistIsAnErrorThatCreatesNothing() throws {
        let store = try temporaryFolder().appending(path: "new-store")
        for access in [StoreAccess.read, .write] {
            #expect(throws: GalleyError.self) { try SQLiteStore(at: store, access: access) }
        }
        #expect(!FileManager.default.fileExists(atPath: store.path))
        // Only an import creates it; reads then stay read-only.
        #expect(try SQLiteStore(at: store, access: .create).access == .write)
        #expect(try SQLiteStore(at: store, access: .read).access == .read)
    }

    @Test func readingAStoreWithAnOlderSchemaMigratesItFirst() throws {
        let store = try temporaryFolder().appending(path: "old-store")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        // A store made by a Galley that knew migrations up to v3, holding an article whose
        // possessive the old index split.
        let pool = try DatabasePool(path: store.appending(path: "store.sqlite").path)
        try StoreSchema.migrator().migrate(pool, upTo: "v3: content digest")
        try pool.write { db in
            try db.execute(sql: """
                INSERT INTO issue (globalID, appleID, title, description, lastUpdated, lastUpdatedMs, displayDate, publishDate, publishDay, metadata, folder)
                VALUES ('i1', 'org.example.old', 'Old', '', '2026-01-01T00:00:00.000+0000', 0, 'January 2026', '01/01/2026', '2026-01-01', '{}', 'old')
                """)
            let issue = db.lastInsertedRowID
            var row = ArticleRow(
                ArticleRecord(globalID: "a1", title: "Old", body: "<p>Queequeg&rsquo;s harpoon</p>", dateLastUpdated: "2026-01-01T00:00:00.000+0000"),
                issue: issue, placement: 1, writer: JSONWriter(pretty: false))
            try row.insert(db)
            try db.execute(sql: "INSERT INTO articleSearch (rowid, title, dek, keywords, body) VALUES (?, 'Old', '', '', 'Queequeg s harpoon')",
                           arguments: [db.lastInsertedRowID])
        }
        try pool.close()

        let opened = try SQLiteStore(at: store, access: .read)
        #expect(opened.access == .write)
        #expect(try titles(opened.search("anything")).isEmpty)
        #expect(try titles(opened.search("queequeg's")) == ["Old"], "the index was rebuilt from the articles")
        #expect(try SQLiteStore(at: store, access: .read).access == .read)
    }
}
