import Foundation
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit
import Logging
import PostgresNIO

/// An issue store shared by several machines: the catalogue in PostgreSQL (postgres-nio), the
/// files in a blob folder addressed by SHA-256 (`BlobFolder`). Behind the same `IssueStore` as
/// `SQLiteStore`, and held to the same conformance suite.
///
/// Imports, deletions and gc hold a session advisory lock (`PostgresSchema.writerLock`) instead
/// of the SQLite store's `.lock` file: a second writer on any machine waits for it, and a writer
/// that dies releases it with its connection. Each import is one transaction; files reach their
/// content address before it commits, so a reader never sees a row without its file, and what a
/// killed import placed is removed by the next writer (or `gc`).
public final class PostgresStore: IssueStore {
    /// The blob folder (where `sync` keeps its downloads in progress, as in a SQLite store's folder).
    public let root: URL
    public let access: StoreAccess
    public var waitsOnNetwork: Bool { true }
    let address: PostgresAddress
    let connections: PostgresConnections
    let blobs: any BlobStore
    /// The revision as LISTEN/NOTIFY keeps it (`serve`'s ETags without a query per request).
    let revisions = PostgresRevision()
    var logger: PostgresCalls { connections.logger }

    public convenience init(_ address: String, access: StoreAccess, environment: [String: String]) throws {
        try self.init(address: PostgresAddress(address, environment: environment), access: access, environment: environment)
    }

    /// `statements` is told every statement before it is sent (the plan tests explain each one).
    package init(
        address: PostgresAddress, access: StoreAccess, environment: [String: String],
        statements: (@Sendable (PostgresQuery) -> Void)? = nil
    ) throws {
        self.address = address
        self.access = access
        blobs = try address.blobStore(environment: environment)
        root = blobs.root
        connections = PostgresConnections(address, statements: statements)
        let blobs = blobs
        try mapping("cannot open the store") {
            try connections.with { connection in
                guard try !PostgresSchema.isCurrent(connection, logger) else { return }
                let empty = try connection.rows("SELECT to_regclass('issue') IS NULL AS empty", logger).first?.bool("empty") ?? true
                if access != .create && empty {
                    throw GalleyError("no Galley store in database `\(address.database)`", id: .storeMissing, path: address.display,
                                      hint: "Import a zip first (galley import ISSUE.zip --store \(address.display)?blobs=…), or pass the right --store or GALLEY_STORE.")
                }
                try PostgresSchema.migrate(connection, logger)
            }
        }
        if access != .read {
            do {
                try blobs.createFolders()
            } catch {
                let (reason, hint) = FileSystemError.describe(error)
                throw GalleyError("cannot use the folder for the store's local work: \(reason)", id: .storeFailed, path: blobs.root.path, hint: hint)
            }
        }
        // An import that was killed leaves its staging folder (and maybe blobs no row names):
        // removed at any open when no writer is at work, as the SQLite store does, so the next
        // command after a crash finds the store clean.
        if !blobs.staged().isEmpty { _ = try? lockedWriter(wait: false) { _ in try removeLeftovers() } }
    }

    deinit {
        revisions.stop()
        connections.close()
    }

    // MARK: Connections, locks, transactions

    /// Runs `body`; failures of the database (not Galley's own errors and findings) become
    /// `store.failed` saying `what`, with the server's message.
    func mapping<T>(_ what: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as GalleyError {
            throw error
        } catch let error as DiagnosticsError {
            throw error
        } catch {
            throw connections.failure(what, error)
        }
    }

    /// Runs `body` on a pooled connection.
    func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try mapping("cannot read the store") { try connections.with(body) }
    }

    /// `body` inside one read-only snapshot (several statements that must agree).
    func snapshot<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try read { connection in
            try transaction(connection, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { try body(connection) }
        }
    }

    /// `body` in one transaction: rolled back when it throws, committed when it returns.
    ///
    /// A COMMIT that fails may have committed all the same: the server can write it and die
    /// (or the connection drop) before the answer arrives. `ifCommitUnsure` runs then, so a
    /// caller that would undo its work on failure (an import removing the blobs it placed)
    /// leaves it to the sweep of leftovers, which compares with what the database has.
    func transaction<T>(
        _ connection: PostgresConnection, begin: PostgresQuery = "BEGIN", ifCommitUnsure: () -> Void = {}, _ body: () throws -> T
    ) throws -> T {
        try connection.run(begin, logger)
        let value: T
        do {
            value = try body()
        } catch {
            // Not on a connection the server closed or that stopped answering: a statement
            // sent there is never answered (postgres-nio), and the server rolls back anyway.
            if !(error is PostgresTimeout), !connection.isClosed { try? connection.run("ROLLBACK", logger) }
            throw error
        }
        do {
            try connection.run("COMMIT", logger)
        } catch {
            ifCommitUnsure()
            throw error
        }
        return value
    }

    /// Runs `body` on a connection of its own that holds the writer lock (the SQLite store's
    /// `.lock`), waiting for another writer on any machine to finish. What this process
    /// commits, it sees at once (the notification follows).
    func writing<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        precondition(access != .read, "the store was opened for reading")
        defer { revisions.invalidate() }
        guard let value = try lockedWriter(wait: true, body) else {
            throw GalleyError("the store's writer lock was not taken", id: .storeFailed, path: address.display)
        }
        return value
    }

    /// `body` under the writer lock, or nil at once when another writer holds it and `wait` is
    /// false. The lock belongs to the session: closing the connection (or the process dying)
    /// releases it.
    private func lockedWriter<T>(wait: Bool, _ body: (PostgresConnection) throws -> T) throws -> T? {
        let connection = try connections.dedicated()
        defer { try? connection.close().wait() }
        return try mapping("cannot write the store") {
            if wait {
                try connection.advisoryLock(PostgresSchema.writerLock, logger)
            } else {
                let got = try connection.rows("SELECT pg_try_advisory_lock(\(PostgresSchema.writerLock)) AS got", logger)
                guard try got.first?.bool("got") == true else { return nil }
            }
            return try body(connection)
        }
    }

    // MARK: Rows to records

    /// `StoredIssue`'s columns from `issue i` (the article count kept on the row by import: a
    /// listing of issues reads no article).
    static let issueColumns = """
        i.global_id, i.apple_id, i.title, i.display_date, i.publish_date, i.last_updated, i.article_count AS articles
        """

    static let articleColumns = """
        a.global_id, i.global_id AS issue_global_id, a.placement, a.title, a.dek, a.section, a.type,
        a.author_name AS author, a.date_last_updated AS date, a.featured, a.keywords
        """

    /// `StoredAsset`'s columns from `asset s JOIN issue i LEFT JOIN article a LEFT JOIN file f`
    /// (the file gives the blob, so the path).
    static let assetSelect = """
        SELECT s.global_id, i.global_id AS issue_global_id, a.global_id AS article_global_id, s.kind, s.placement,
            s.caption, s.source AS credit, s.file_name, s.crop350, s.metadata, f.sha256 AS file_sha256
        FROM asset s JOIN issue i ON i.id = s.issue_id LEFT JOIN article a ON a.id = s.article_id
        LEFT JOIN file f ON f.issue_id = s.issue_id AND f.name = s.file_name
        """

    static func issue(_ row: PostgresRandomAccessRow) throws -> StoredIssue {
        StoredIssue(globalID: try row.string("global_id"), appleID: try row.string("apple_id"), title: try row.string("title"),
                    displayDate: try row.string("display_date"), publishDate: try row.string("publish_date"),
                    lastUpdated: try row.string("last_updated"), articles: Int(try row.int("articles")))
    }

    static func article(_ row: PostgresRandomAccessRow) throws -> StoredArticle {
        StoredArticle(globalID: try row.string("global_id"), issueGlobalID: try row.string("issue_global_id"),
                      placement: Int(try row.int("placement")), title: try row.string("title"), dek: try row.string("dek"),
                      section: try row.string("section"), type: try row.string("type"), author: try row.string("author"),
                      date: try row.string("date"), featured: try row.bool("featured"), keywords: try row.string("keywords"),
                      body: row.contains("body") ? try row.string("body") : nil)
    }

    func asset(_ row: PostgresRandomAccessRow) throws -> StoredAsset {
        let sha = try row.optionalString("file_sha256")
        return StoredAsset(globalID: try row.string("global_id"), issueGlobalID: try row.string("issue_global_id"),
                           articleGlobalID: try row.optionalString("article_global_id"), kind: try row.string("kind"),
                           placement: Int(try row.int("placement")), caption: try row.string("caption"), credit: try row.string("credit"),
                           fileName: try row.string("file_name"), crop350: try row.string("crop350"),
                           path: sha.map { blobs.address($0) } ?? "", metadata: try row.optionalString("metadata"), sha256: sha)
    }

    func notFound(issue id: String) -> GalleyError {
        StoreLookup.noIssue(id, store: address.display)
    }

    // MARK: Issues

    public func issues() throws -> [StoredIssue] {
        try read { connection in
            try connection.rows(PostgresQuery(unsafeSQL: """
                SELECT \(Self.issueColumns) FROM issue i
                ORDER BY i.publish_day DESC NULLS LAST, i.last_updated_ms DESC NULLS LAST, i.apple_id
                """), logger).map(Self.issue)
        }
    }

    public func issueSummary(_ id: String) throws -> StoredIssue {
        try read { connection in try issueSummary(id, connection) }
    }

    func issueSummary(_ id: String, _ connection: PostgresConnection) throws -> StoredIssue {
        var query = PostgresQuery(unsafeSQL: "SELECT \(Self.issueColumns) FROM issue i WHERE i.global_id = $1 OR i.apple_id = $1")
        query.binds.append(id)
        guard let row = try connection.rows(query, logger).first else { throw notFound(issue: id) }
        return try Self.issue(row)
    }

    /// The row id of the issue with this global id or apple_id (an unknown id is an error), so
    /// that listings of one issue filter on the article's indexed `issue_id`.
    func issueRowID(_ id: String, _ connection: PostgresConnection) throws -> Int64 { try issueKey(id, connection).row }

    /// The row id and apple_id of an issue by either id.
    func issueKey(_ id: String, _ connection: PostgresConnection) throws -> (row: Int64, appleID: String) {
        // The lowest of the (at most two) rows, taken here: `ORDER BY id LIMIT 1` walks the
        // primary key instead of seeking the two unique indexes.
        let keys = try connection.rows("SELECT id, apple_id FROM issue WHERE global_id = \(id) OR apple_id = \(id)", logger).map {
            (row: try $0.int("id"), appleID: try $0.string("apple_id"))
        }
        guard let first = keys.min(by: { $0.row < $1.row }) else { throw notFound(issue: id) }
        return first
    }

    /// The issue, then its articles through the listing's server-side cursor, in one snapshot.
    public func eachIssueArticle(
        _ id: String, withBodies: Bool, begin: (StoredIssue) throws -> Void, _ body: (StoredArticle) throws -> Void
    ) throws {
        try eachRow(body) { connection in
            let issue = try issueSummary(id, connection)
            try begin(issue)
            var filter = ArticleFilter(issue: issue.globalID)
            filter.withBodies = withBodies
            return try articleQuery(filter, extra: 0, connection)
        } make: { try Self.article($0) }
    }

    public func issues(relativeTo id: String, older: Bool) throws -> [StoredIssue] {
        try snapshot { connection in
            let issue = try issueSummary(id, connection)
            let days = try connection.rows("SELECT publish_day FROM issue WHERE global_id = \(issue.globalID)", logger)
            guard let day = try days.first?.optionalString("publish_day") else { return [] }
            // In the listing's order (`issue_order`), or exactly against it for the newer ones.
            let order = older ? "i.publish_day DESC NULLS LAST, i.last_updated_ms DESC NULLS LAST, i.apple_id"
                : "i.publish_day NULLS FIRST, i.last_updated_ms NULLS FIRST, i.apple_id DESC"
            var query = PostgresQuery(unsafeSQL: """
                SELECT \(Self.issueColumns) FROM issue i
                WHERE i.publish_day \(older ? "<" : ">") $1 ORDER BY \(order)
                """)
            query.binds.append(day)
            return try connection.rows(query, logger).map(Self.issue)
        }
    }

    // MARK: Articles

    /// The listing through a cursor of the server's (`eachRow`).
    public func eachArticle(_ filter: ArticleFilter, _ body: (StoredArticle) throws -> Void) throws {
        try eachRow(body) { connection in try articleQuery(filter, extra: 0, connection) } make: { try Self.article($0) }
    }

    public func articlePage(_ filter: ArticleFilter) throws -> ArticlePage {
        try snapshot { connection in
            let rows = try articleRows(filter, extra: 1, connection)
            let limit = filter.limit ?? rows.count
            let items = try rows.prefix(limit).map(Self.article)
            var next: String?
            if rows.count > limit, let last = rows.prefix(limit).last {
                let key: ArticleCursor.Key = filter.byDate ? .number(try last.int("cursor_key")) : .text(try last.string("cursor_key"))
                next = ArticleCursor(byDate: filter.byDate, key: key, appleID: try last.string("cursor_issue"),
                                     placement: try last.int("placement")).encoded
            }
            return ArticlePage(items: items, next: next)
        }
    }

    /// The listing's rows in its total order (as SQLite's `articleRows`), `extra` past the limit.
    private func articleRows(_ filter: ArticleFilter, extra: Int, _ connection: PostgresConnection) throws -> [PostgresRandomAccessRow] {
        try connection.rows(try articleQuery(filter, extra: extra, connection), logger)
    }

    /// The SELECT of `articleRows`.
    private func articleQuery(_ filter: ArticleFilter, extra: Int, _ connection: PostgresConnection) throws -> PostgresQuery {
        var query = PostgresFilter()
        // One issue's articles in placement order are its `article_listing` index's order: the
        // issue's own keys are the same on every row, so a page reads only the page.
        let issueKey = try filter.issue.map { try self.issueKey($0, connection) }
        let inPlacementOrder = issueKey != nil && !filter.byDate
        if let issueKey { query.add("a.issue_id = \(query.bind(issueKey.row))") }
        if let type = filter.type { query.add("a.type = \(query.bind(type))") }
        if let excluded = filter.excludeType { query.add("a.type <> \(query.bind(excluded))") }
        if filter.featured { query.add("a.featured") }
        if let keyword = filter.keyword {
            // Whole keywords of the comma-separated list, any case (as SQLite's LIKE), through
            // the `article_keywords` index's expression.
            query.add("string_to_array(lower(a.keywords), ',') @> ARRAY[lower(\(query.bind(keyword)))]")
        }
        let key = filter.byDate ? "coalesce(a.date_ms, -9223372036854775807)" : "coalesce(i.publish_day, '')"
        if let after = filter.after {
            guard let cursor = ArticleCursor(encoded: after), cursor.byDate == filter.byDate else {
                throw ArticleCursor.notThisListing
            }
            let value: String
            switch cursor.key {
            case .number(let number) where filter.byDate: value = query.bind(number)
            case .text(let text) where !filter.byDate: value = query.bind(text)
            default:
                throw ArticleCursor.notThisListing
            }
            if inPlacementOrder, let issueKey {
                // A cursor of this issue's listing names this issue (then this is the general
                // test, the issue's keys being equal on both sides).
                guard cursor.appleID == issueKey.appleID else { throw ArticleCursor.otherIssue(issueKey.appleID) }
                query.add("\(key) = \(value) AND a.placement > \(query.bind(cursor.placement))")
            } else {
                let apple = query.bind(cursor.appleID)
                let placement = query.bind(cursor.placement)
                query.add("(\(key) < \(value) OR (\(key) = \(value) AND (i.apple_id > \(apple) OR (i.apple_id = \(apple) AND a.placement > \(placement)))))")
            }
        }
        let columns = Self.articleColumns + (filter.withBodies ? ", a.body" : "") + ", \(key) AS cursor_key, i.apple_id AS cursor_issue"
        var sql = "SELECT \(columns) FROM article a JOIN issue i ON i.id = a.issue_id" + query.whereSQL
        sql += inPlacementOrder ? " ORDER BY a.placement" : " ORDER BY \(key) DESC, i.apple_id, a.placement"
        if let limit = filter.limit {
            sql += " LIMIT \(query.bind(Int64(limit + extra))) OFFSET \(query.bind(Int64(limit * filter.page)))"
        }
        return PostgresQuery(unsafeSQL: sql, binds: query.binds)
    }

    /// The row id of an article by global id; with several issues holding that id, `issue` decides.
    func articleRowID(_ id: String, issue: String?, _ connection: PostgresConnection) throws -> Int64 {
        var query = PostgresFilter()
        query.add("a.global_id = \(query.bind(id))")
        if let issue {
            let named = query.bind(issue)
            query.add("(i.global_id = \(named) OR i.apple_id = \(named))")
        }
        let ids = try connection.rows(PostgresQuery(unsafeSQL: "SELECT a.id FROM article a JOIN issue i ON i.id = a.issue_id" + query.whereSQL,
                                                    binds: query.binds), logger).map { try $0.int("id") }
        return try StoreLookup.oneArticle(ids, id, store: address.display)
    }

    public func eachArticleNeighbour(
        _ id: String, issue: String?, sides: Set<ArticleNeighbour>, begin: (ArticleDetail) throws -> Void,
        _ neighbour: (ArticleNeighbour, StoredArticle) throws -> Void
    ) throws {
        // Newer then older, each nearest first, through one cursor: `side` 0 is newer, and the
        // older ones' dates count down by sorting on their negation.
        try eachRow({ try neighbour($0.0, $0.1) }) { connection in
            let rowID = try articleRowID(id, issue: issue, connection)
            guard let row = try connection.rows("""
                SELECT a.body, a.description, a.url, a.author_url, a.author_bio, a.sku, a.published, a.custom_meta, a.issue_id, a.date_ms
                FROM article a WHERE a.id = \(rowID)
                """, logger).first,
                let summaryRow = try connection.rows(PostgresQuery(unsafeSQL: """
                    SELECT \(Self.articleColumns) FROM article a JOIN issue i ON i.id = a.issue_id WHERE a.id = $1
                    """, binds: Self.binds(rowID)), logger).first
            else { throw GalleyError("no article `\(id)` in the store", id: .notFound, path: address.display) }
            let assets = try connection.rows(PostgresQuery(unsafeSQL: Self.assetSelect + " WHERE s.article_id = $1 ORDER BY s.kind, s.placement",
                                                           binds: Self.binds(rowID)), logger).map(asset)
            let metaText = try row.string("custom_meta")
            let meta = JSONValue(parsing: metaText) ?? .string(metaText)
            try begin(ArticleDetail(
                article: try Self.article(summaryRow), body: try row.string("body"), description: try row.string("description"),
                url: try row.string("url"), authorURL: try row.string("author_url"), authorBio: try row.string("author_bio"),
                sku: try row.optionalString("sku"), published: try row.bool("published"), customMeta: JSONValueBox(meta),
                assets: assets, newer: [], older: []))
            // No date: no neighbours (the comparisons with NULL select nothing); a side not
            // asked for is left out of the comparison.
            let dated = switch (sides.contains(.newer), sides.contains(.older)) {
            case (true, true): "a.date_ms <> $2"
            case (true, false): "a.date_ms > $2"
            case (false, true): "a.date_ms < $2"
            case (false, false): "false"
            }
            var query = PostgresQuery(unsafeSQL: """
                SELECT \(Self.articleColumns), CASE WHEN a.date_ms > $2 THEN 0 ELSE 1 END AS side
                FROM article a JOIN issue i ON i.id = a.issue_id
                WHERE a.issue_id = $1 AND \(dated)
                ORDER BY side, CASE WHEN a.date_ms > $2 THEN a.date_ms ELSE -a.date_ms END, a.placement
                """)
            query.binds.append(try row.int("issue_id"))
            query.binds.append(try row.optionalInt("date_ms"))
            return query
        } make: { row in
            (try row.int("side") == 0 ? ArticleNeighbour.newer : .older, try Self.article(row))
        }
    }

    // MARK: Assets and files

    /// The listing through a cursor of the server's (`eachRow`).
    public func eachAsset(_ filter: AssetFilter, _ body: (StoredAsset) throws -> Void) throws {
        try eachAsset(filter, batch: Self.fetchBatch, body)
    }

    /// `eachAsset`, `batch` rows a FETCH.
    func eachAsset(_ filter: AssetFilter, batch: Int, _ body: (StoredAsset) throws -> Void) throws {
        try eachRow(body, batch: batch) { connection in
            var query = PostgresFilter()
            if let issue = filter.issue { query.add("s.issue_id = \(query.bind(try issueRowID(issue, connection)))") }
            if let article = filter.article {
                query.add("s.article_id = \(query.bind(try articleRowID(article, issue: filter.issue, connection)))")
            }
            if let kind = filter.first ? .image : filter.kind { query.add("s.kind = \(query.bind(kind.rawValue))") }
            if filter.issueOwn { query.add("s.article_id IS NULL") }
            var sql = Self.assetSelect + query.whereSQL
            // One issue's assets in the `asset_order` index's order where it gives it (the
            // issue's own, the cover first); the issue's place in the listing only when there are several.
            if filter.issue != nil && filter.issueOwn {
                sql += " ORDER BY s.kind, s.placement"
            } else if filter.issue != nil {
                sql += " ORDER BY coalesce(a.placement, 0), s.kind, s.placement"
            } else {
                sql += " ORDER BY i.publish_day DESC NULLS LAST, i.apple_id, coalesce(a.placement, 0), s.kind, s.placement"
            }
            if filter.first { sql += " LIMIT 1" }
            return PostgresQuery(unsafeSQL: sql, binds: query.binds)
        } make: { try asset($0) }
    }

    /// The rows of the query `select` makes, through a cursor of the server's (DECLARE in the
    /// snapshot's transaction, then FETCH `batch` rows at a time): they come as `body` takes them,
    /// a batch in memory. `body`'s own error reaches the caller as it is, not as the store's
    /// failure.
    private func eachRow<Item>(
        _ body: (Item) throws -> Void, batch: Int = PostgresStore.fetchBatch, select: (PostgresConnection) throws -> PostgresQuery,
        make: (PostgresRandomAccessRow) throws -> Item
    ) throws {
        var bodyError: (any Error)?
        do {
            try snapshot { connection in
                try eachRow(try select(connection), batch: batch, connection) { row in
                    let item = try make(row)
                    do { try body(item) } catch {
                        bodyError = error
                        throw error
                    }
                }
            }
        } catch {
            throw bodyError ?? error
        }
    }

    /// `query`'s rows through a cursor of the server's, `batch` at a time, inside the transaction
    /// `connection` is in (a snapshot's): a listing of any length with a batch in memory.
    func eachRow(
        _ query: PostgresQuery, batch: Int = PostgresStore.fetchBatch, _ connection: PostgresConnection,
        _ body: (PostgresRandomAccessRow) throws -> Void
    ) throws {
        var query = query
        query.sql = "DECLARE listing NO SCROLL CURSOR FOR " + query.sql
        try connection.run(query, logger)
        while true {
            let rows = try connection.rows(PostgresQuery(unsafeSQL: "FETCH \(batch) FROM listing"), logger)
            for row in rows { try body(row) }
            if rows.count < batch { break }
        }
        try connection.run("CLOSE listing", logger)
    }

    /// Rows a FETCH of a listing brings (about 0.5 MB of assets, 1-4 MB of articles).
    static let fetchBatch = 1_000

    public func file(_ name: String, issue: String) throws -> StoredFile {
        try snapshot { connection in
            let summary = try issueSummary(issue, connection)
            guard let row = try connection.rows("""
                SELECT f.name, f.size, f.sha256 FROM file f JOIN issue i ON i.id = f.issue_id
                WHERE i.global_id = \(summary.globalID) AND f.name = \(name)
                """, logger).first else {
                throw StoreLookup.noFile(name, issue: issue, store: address.display)
            }
            let sha = try row.string("sha256")
            return StoredFile(name: try row.string("name"), path: blobs.address(sha), size: try row.int("size"), sha256: sha,
                              lastUpdated: DumplingDate.rfc3339(summary.lastUpdated))
        }
    }

    public func revision() throws -> Int64 {
        try revisions.current(connections: connections) {
            try read { connection in
                try connection.rows("SELECT value FROM store_revision WHERE id = 1", logger).first?.int("value") ?? 0
            }
        }
    }

    // MARK: Packages

    static let packageSelect = """
        SELECT apple_id, global_id, package_version, package_sha256, package_size, last_updated, package_withheld
        FROM issue WHERE package_sha256 IS NOT NULL
        """

    private func storedPackage(_ row: PostgresRandomAccessRow) throws -> StoredPackage {
        let sha = try row.string("package_sha256")
        return StoredPackage(appleID: try row.string("apple_id"), globalID: try row.string("global_id"),
                             version: try row.optionalInt("package_version") ?? 0, sha256: sha,
                             size: try row.optionalInt("package_size") ?? 0, lastUpdated: DumplingDate.rfc3339(try row.string("last_updated")),
                             path: blobs.address(sha), withheld: try row.optionalString("package_withheld"))
    }

    public func packages() throws -> [StoredPackage] {
        try read { connection in
            try connection.rows(PostgresQuery(unsafeSQL: Self.packageSelect
                + " ORDER BY publish_day DESC NULLS LAST, last_updated_ms DESC NULLS LAST, apple_id"), logger).map(storedPackage)
        }
    }

    public func package(_ id: String) throws -> StoredPackage {
        try snapshot { connection in
            let summary = try issueSummary(id, connection)
            guard let row = try connection.rows(PostgresQuery(unsafeSQL: Self.packageSelect + " AND global_id = $1",
                                                              binds: Self.binds(summary.globalID)), logger).first else {
                throw GalleyError("issue `\(summary.appleID)` has no package", id: .notFound, path: address.display,
                                  hint: "Import its zip again with --force to keep it.")
            }
            return try storedPackage(row)
        }
    }

    /// A local copy of a file the store lists (object storage: fetched once into this machine's
    /// cache, checked against its SHA-256).
    public func localFile(_ file: StoredFile) throws -> StoredFile {
        guard !blobs.isLocal else { return file }
        var local = file
        local.path = try blobs.localFile(file.sha256, size: file.size).path
        return local
    }

    static func binds(_ value: some PostgresDynamicTypeEncodable) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(value)
        return binds
    }
}

/// A query's WHERE clauses with their numbered parameters, built filter by filter (the
/// PostgreSQL spelling of `SQLFilter`).
struct PostgresFilter {
    private(set) var clauses: [String] = []
    private(set) var binds = PostgresBindings()

    /// Binds `value` and returns its placeholder (`$n`).
    mutating func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    mutating func add(_ clause: String) { clauses.append(clause) }

    var whereSQL: String { clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ") }
}
