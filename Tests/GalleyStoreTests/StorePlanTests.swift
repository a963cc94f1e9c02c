import Foundation
import GRDB
import GRDBSQLite
import GalleyTestSupport
import PostgresNIO
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit
@testable import GalleyStore
@testable import GalleyStorePostgres
@testable import GalleyStoreSQLite

/// Every query `serve` and the command line make, on both backends, on a store of 151 issues of
/// 60 articles (grown by `bench/grow_store.py` from one imported issue): each statement the store
/// sends is explained, and must use an index and read about as many rows as it returns, so a
/// change that brings back a scan or a sort of a whole table fails here, not at a publisher's.
///
/// PostgreSQL: `EXPLAIN (ANALYZE, FORMAT JSON)` with sequential scans priced out
/// (`enable_seqscan` off: a plan that still has one has no index to use), then the rows every
/// table or index scan read (returned, and removed by its filter, times its loops) against the
/// rows the statement returned, and no sort of more rows than it returns. SQLite: `EXPLAIN QUERY PLAN` has no bare scan of a
/// table and no temporary B-tree for the order of a limited listing, and running it steps no
/// more through full scans (`SQLITE_STMTSTATUS_FULLSCAN_STEP`) than the same bound.
@Suite(.serialized) struct StorePlanTests {
    static let template = "org.example.plans"
    static let copies = 150
    static let articlesPerIssue = 60

    /// What a statement may read: each row it returns joined to up to `joined` others, plus
    /// `margin` (the probe past a page's end, a lookup of the issue).
    struct Bound {
        var joined = 3
        var margin = 30
        func allows(read: Int, returned: Int) -> Bool { read <= joined * returned + margin }
    }

    /// One thing a command or a route asks of the store, with what it may read.
    struct Query {
        var name: String
        var bound = Bound()
        var run: (any IssueStore) throws -> Void
    }

    /// Ids of the grown store the queries name.
    struct Names {
        var issue: String
        var article: String
        var fileName: String
        var cursor: String
        var issueCursor: String
    }

    static func queries(_ names: Names) -> [Query] {
        func page(_ configure: @escaping (inout ArticleFilter) -> Void) -> (any IssueStore) throws -> Void {
            { store in
                var filter = ArticleFilter(limit: 20)
                configure(&filter)
                _ = try store.articlePage(filter)
            }
        }
        var broad = SearchOptions()
        broad.limit = 20
        var inIssue = SearchOptions(issue: names.issue)
        inIssue.limit = 20
        // PostgreSQL walks the issues in order and sorts each one's articles by placement
        // (an incremental sort): a page reads the issues it touches, at most three here.
        let listing = Bound(joined: 3, margin: 3 * articlesPerIssue + 30)
        let filtered = Bound(joined: 10, margin: listing.margin)
        // An asset row with its issue, article and file.
        let assets = Bound(joined: 4)
        let search = Bound(joined: 3, margin: 2 * (SearchOptions.defaultRankLimit + 1) + 30)
        return [
            Query(name: "issues") { _ = try $0.issues() },
            Query(name: "issue summary") { _ = try $0.issueSummary(names.issue) },
            Query(name: "issue with its articles") { _ = try $0.issue(names.issue) },
            Query(name: "issue with its articles' bodies") { store in
                try store.eachIssueArticle(names.issue, withBodies: true, begin: { _ in }) { _ in }
            },
            Query(name: "issues older") { _ = try $0.issues(relativeTo: names.issue, older: true) },
            Query(name: "issues newer") { _ = try $0.issues(relativeTo: names.issue, older: false) },
            Query(name: "articles, first page", bound: listing, run: page { _ in }),
            Query(name: "articles, next page", bound: listing, run: page { $0.after = names.cursor }),
            Query(name: "articles by date", run: page { $0.byDate = true }),
            Query(name: "an issue's articles, first page", run: page { $0.issue = names.issue }),
            Query(name: "an issue's articles, next page", run: page { $0.issue = names.issue; $0.after = names.issueCursor }),
            // A filter that one article in five or seven passes reads that many for each.
            Query(name: "articles of a type", bound: filtered, run: page { $0.type = "feature" }),
            Query(name: "articles but a type", bound: filtered, run: page { $0.excludeType = "feature" }),
            Query(name: "featured articles", bound: filtered, run: page { $0.featured = true }),
            Query(name: "articles with a keyword", bound: filtered, run: page { $0.keyword = "harbour" }),
            Query(name: "an article with its neighbours") { _ = try $0.article(names.article, issue: names.issue) },
            Query(name: "an article by id alone") { _ = try $0.article(names.article, issue: nil, neighbours: []) },
            Query(name: "an issue's assets", bound: assets) { _ = try $0.assets(AssetFilter(issue: names.issue)) },
            Query(name: "an article's assets", bound: assets) { _ = try $0.assets(AssetFilter(issue: names.issue, article: names.article)) },
            Query(name: "an issue's cover", bound: assets) { _ = try $0.assets(AssetFilter(issue: names.issue, issueOwn: true, first: true)) },
            Query(name: "an issue's images", bound: assets) { _ = try $0.assets(AssetFilter(issue: names.issue, kind: .image)) },
            Query(name: "a file") { _ = try $0.file(names.fileName, issue: names.issue) },
            Query(name: "packages") { _ = try $0.packages() },
            Query(name: "a package") { _ = try $0.package(names.issue) },
            Query(name: "revision") { _ = try $0.revision() },
            Query(name: "independent articles") { _ = try $0.independentArticles() },
            // A search ranks its matches (at most the rank limit's most recent): it reads them.
            Query(name: "a rare word", bound: search) { _ = try $0.search("lighthouse07", options: broad) },
            Query(name: "a rare word in an issue", bound: search) { _ = try $0.search("lighthouse07", options: inIssue) },
            Query(name: "a broad search", bound: search) { _ = try $0.search("harbour", options: broad) },
            Query(name: "a broad search in an issue", bound: search) { _ = try $0.search("harbour", options: inIssue) },
        ]
    }

    // MARK: The store

    /// A source of `articlesPerIssue` articles: every fifth a feature, every seventh featured,
    /// the keyword `harbour` on every third, a word of its own (`lighthouseNN`) in each, and an
    /// image each.
    static func templateZip() throws -> String {
        let source = Scratch.path("galley-plans-source")
        let articles = source.appending(path: "articles")
        try FileManager.default.createDirectory(at: articles, withIntermediateDirectories: true)
        try "title: Plans\napple_id: \(template)\npublish_date: 2026-03-01\nimages: [cover.jpg]\n"
            .write(to: source.appending(path: "issue.yaml"), atomically: true, encoding: .utf8)
        let photo = TestFiles.example.appending(path: "cover.jpg")
        try FileManager.default.copyItem(at: photo, to: source.appending(path: "cover.jpg"))
        for index in 0..<articlesPerIssue {
            let folder = articles.appending(path: String(format: "%03d-article-%d", index + 1, index + 1))
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: photo, to: folder.appending(path: "photo.jpg"))
            let keywords = index % 3 == 0 ? "[harbour, k\(index % 17)]" : "[k\(index % 17)]"
            try """
                ---
                title: Article \(index + 1)
                type: \(index % 5 == 0 ? "feature" : "news")
                featured: \(index % 7 == 0)
                keywords: \(keywords)
                assets:
                  - file: photo.jpg
                    caption: The quay
                ---
                The harbour at night, lighthouse\(String(format: "%02d", index)) and the ferry.

                <!-- [ASSET: photo.jpg] -->

                """.write(to: folder.appending(path: "article.md"), atomically: true, encoding: .utf8)
        }
        let out = Scratch.path("galley-plans-zip")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        return try Packer().pack(PackOptions(source: source, output: out)).path
    }

    /// `bench/grow_store.py` on the store `display` names.
    static func grow(_ display: String) throws {
        let script = TestFiles.fixtures.deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "bench/grow_store.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, display, "--from", template, "--copies", String(copies)]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let said = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw GalleyError("grow_store.py failed: \(String(decoding: said, as: UTF8.self))")
        }
    }

    /// The grown store's ids the queries name: a copy in the middle of the archive, one of its
    /// articles with an image, and cursors that are not the first page's.
    static func names(_ store: any IssueStore) throws -> Names {
        let issue = "\(template).c\(copies / 2)"
        let articles = try store.issue(issue).articles
        let article = articles[articles.count / 2].globalID
        let file = try #require(try store.assets(AssetFilter(issue: issue, article: article)).first).fileName
        let cursor = try #require(try store.articlePage(ArticleFilter(limit: 200)).next)
        let issueCursor = try #require(try store.articlePage(ArticleFilter(issue: issue, limit: 20)).next)
        return Names(issue: issue, article: article, fileName: file, cursor: cursor, issueCursor: issueCursor)
    }

    final class Recorded<Statement>: @unchecked Sendable {
        private let lock = NSLock()
        private var statements: [Statement] = []
        func add(_ statement: Statement) { lock.withLock { statements.append(statement) } }
        func take() -> [Statement] { lock.withLock { defer { statements = [] }; return statements } }
    }

    // MARK: SQLite

    @Test func everySQLiteQueryUsesAnIndexAndReadsWhatItReturns() throws {
        ProcessEnvironment.configureForArchives()
        let root = Scratch.path("galley-plans-sqlite")
        do {
            let store = try SQLiteStore(at: root, access: .create)
            _ = try store.importZip(try Self.templateZip())
        }
        try Self.grow(root.path)
        let recorded = Recorded<String>()
        // Opening it rebuilds the search index the copies left stale, then it is read as serve reads it.
        _ = try SQLiteStore(at: root, access: .write)
        let store = try SQLiteStore(at: root, access: .read, statements: { recorded.add($0) })
        #expect(try store.issues().count == Self.copies + 1)
        let names = try Self.names(store)
        let explainer = try SQLiteStore(at: root, access: .read)
        for query in Self.queries(names) {
            _ = recorded.take()
            try query.run(store)
            // GRDB reads the schema once per connection (`sqlite_master`), not the store.
            let statements = recorded.take().filter { Self.isQuery($0) && !$0.contains("sqlite_master") }
            #expect(!statements.isEmpty, "\(query.name): no statement")
            for sql in statements {
                try explainer.database.read { db in try Self.checkSQLite(sql, query, db) }
            }
        }
    }

    static func isQuery(_ sql: String) -> Bool {
        let start = sql.drop(while: \.isWhitespace).prefix(7).uppercased()
        return start.hasPrefix("SELECT") || start.hasPrefix("WITH")
    }

    static func checkSQLite(_ sql: String, _ query: Query, _ db: Database) throws {
        let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String? ?? "" }
        let limited = sql.range(of: "LIMIT", options: .caseInsensitive) != nil
        for step in plan {
            // `SCAN a` without an index: every row of the table.
            let words = step.split(separator: " ")
            let bareScan = words.first == "SCAN" && !step.contains("INDEX") && !step.contains("VIRTUAL TABLE")
                && words.count == 2
            // (A scan of json_each's ids, or of a subquery's rows, whose own steps are checked.)
            #expect(!bareScan || words.last == "json_each" || words.last?.hasPrefix("(subquery") == true,
                    "\(query.name): \(step)\n\(sql)\n\(plan)")
            #expect(!(limited && step.contains("TEMP B-TREE FOR ORDER BY") && !sql.contains(SearchRank.name)),
                    "\(query.name): sorts before its limit: \(step)\n\(sql)")
        }
        let statement = try db.makeStatement(sql: sql)
        let rows = try Row.fetchCursor(statement)
        var returned = 0
        while try rows.next() != nil { returned += 1 }
        let fullScanSteps = Int(sqlite3_stmt_status(statement.sqliteStatement, SQLITE_STMTSTATUS_FULLSCAN_STEP, 0))
        #expect(query.bound.allows(read: fullScanSteps, returned: returned),
                "\(query.name): \(fullScanSteps) steps of full scans for \(returned) rows\n\(sql)\n\(plan)")
    }

    // MARK: PostgreSQL

    @Test(.enabled(if: PostgresTestServer.enabled))
    func everyPostgresQueryUsesAnIndexAndReadsWhatItReturns() throws {
        ProcessEnvironment.configureForArchives()
        let display = try PostgresTestServer.newStore()
        let environment = ProcessInfo.processInfo.environment
        let address = try PostgresAddress(display, environment: environment)
        do {
            let store = try PostgresStore(address: address, access: .create, environment: environment)
            _ = try store.importZip(try Self.templateZip())
        }
        try Self.grow(display)
        let recorded = Recorded<PostgresQuery>()
        let store = try PostgresStore(address: address, access: .read, environment: environment, statements: { recorded.add($0) })
        try store.settleAfterLoad()
        #expect(try store.issues().count == Self.copies + 1)
        let names = try Self.names(store)
        let explainer = try PostgresStore(address: address, access: .read, environment: environment)
        for query in Self.queries(names) {
            _ = recorded.take()
            try query.run(store)
            var statements = recorded.take()
            for index in statements.indices {
                let prefix = "DECLARE listing NO SCROLL CURSOR FOR "
                if statements[index].sql.hasPrefix(prefix) { statements[index].sql.removeFirst(prefix.count) }
            }
            statements = statements.filter { Self.isQuery($0.sql) && !$0.sql.contains("pg_try_advisory_lock") }
            #expect(!statements.isEmpty, "\(query.name): no statement")
            for statement in statements { try Self.checkPostgres(statement, query, explainer) }
        }
    }

    static func checkPostgres(_ statement: PostgresQuery, _ query: Query, _ store: PostgresStore) throws {
        let text = try store.connections.with { connection -> String in
            try connection.run("SET enable_seqscan = off", store.logger)
            defer {
                try? connection.run("RESET enable_seqscan", store.logger)
            }
            let explain = PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, FORMAT JSON) " + statement.sql, binds: statement.binds)
            let row = try #require(try connection.rows(explain, store.logger).first)
            return try #require(row[0].bytes).getString(at: 0, length: row[0].bytes?.readableBytes ?? 0) ?? ""
        }
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8))
        let document = try #require(parsed as? [[String: Any]])
        let top = try #require(document.first?["Plan"] as? [String: Any])
        var read = 0
        var sorted = 0
        var problems: [String] = []
        func walk(_ node: [String: Any]) {
            let type = node["Node Type"] as? String ?? ""
            let loops = node["Actual Loops"] as? Int ?? 1
            read += (node["Rows Removed by Join Filter"] as? Int ?? 0) * loops
            if let relation = node["Relation Name"] as? String {
                let rows = (node["Actual Rows"] as? Int ?? 0) + (node["Rows Removed by Filter"] as? Int ?? 0)
                    + (node["Rows Removed by Index Recheck"] as? Int ?? 0)
                read += rows * loops
                if type == "Seq Scan" { problems.append("Seq Scan on \(relation)") }
            }
            if type == "Sort", let rows = node["Actual Rows"] as? Int { sorted = max(sorted, rows * loops) }
            for child in node["Plans"] as? [[String: Any]] ?? [] { walk(child) }
        }
        walk(top)
        let returned = top["Actual Rows"] as? Int ?? 0
        // A sort of what the statement returns is no cost a bigger store raises; one before a
        // limit is.
        if sorted > returned + query.bound.margin { problems.append("Sort of \(sorted) rows for \(returned)") }
        if !query.bound.allows(read: read, returned: returned) { problems.append("read \(read) rows for \(returned)") }
        #expect(problems.isEmpty, "\(query.name): \(problems.joined(separator: "; "))\n\(statement.sql)\n\(text)")
    }
}
