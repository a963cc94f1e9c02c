import Foundation
import GRDB
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit

/// An import's rows written while its pass runs: latest.json's checks hand each article over as
/// they pass it (`Validator.ArticleObserver`), it is made ready on their thread, and a thread
/// of its own writes it inside one transaction that stays open until the import says how it
/// ends. The import then adds the issue's row and its files' rows and commits (`complete`), or
/// the transaction is rolled back (`abandon`): readers never see a row of it before the commit,
/// and a zip the pass refuses leaves the database as it was.
///
/// Written after the pass instead, from the extracted latest.json, they take a second parse
/// on both cores after the pass, which leaves a core idle at its end; beside it, they fill
/// those gaps.
///
/// The rows are the ones the import after the pass would write, in the same order: the issue's
/// own images first, then each article with its search text and assets. They are made from the
/// issue's members read before its first article (its global id and images; Galley and
/// Linechef write them first); should the whole latest.json say otherwise (members after the
/// articles, a key given twice), or have no article, `usable` says no and the import writes its
/// rows the old way. The issue's row id is taken when the transaction starts (the next one
/// SQLite's AUTOINCREMENT would give, with the foreign keys checked at the commit), as the
/// issue's row itself comes last.
final class BesideRows: @unchecked Sendable {
    // @unchecked: `head`, `placement`, `gaveUp` and `writer` are touched only by the thread of
    // latest.json's checks until `articlesEnded` (after that thread ended), then only by the
    // import's thread. `finish` and `outcome` are written before the semaphore each is read
    // after is signalled.
    private enum Item: Sendable {
        case issueImages([AssetRow])
        case article(PreparedArticle)
    }

    private let items = Handover<Item>(capacity: 32)
    /// The pass's files: their rows are written whenever no article waits, so that most are in
    /// by the time the pass ends (the articles usually end first, latest.json being the zip's
    /// first entry). At 30,000 articles their 60,000 rows were 0.2 s of one core after the pass.
    /// The files `take` handed out have their rows in the transaction; the rest go in at
    /// `complete`.
    let files = ImportPass.FileLedger()
    private let decided = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private var finish: ((Database, Int64) throws -> Void)?
    private var outcome: Result<ArticleInserts.Counts, any Error>?
    private var ended = false

    // The checks' thread's side.
    private var head: (globalID: String, images: [AssetRecord])?
    private var placement = 0
    private var gaveUp = false
    private let writer = JSONWriter(pretty: false)

    /// Whether writing the rows beside the pass pays, from latest.json's size and all the
    /// files' (the central directory's): when latest.json is at least 8 MiB and a tenth of the
    /// files. Both cores are full through the pass, so the rows beside it make it longer by
    /// their work, less the second parse of latest.json they save; after it, they share the
    /// cores with the end of the kept zip's copy, whose length goes with the zip's size. So it
    /// pays for text-heavy issues only (`bench/import_bench.py` at 30,000 articles: a tenth
    /// quicker; at 300 and 3,000, slower).
    static func pays(manifestBytes: Int64, zipBytes: Int64) -> Bool {
        manifestBytes >= 8 << 20 && manifestBytes >= zipBytes / 10
    }

    /// Starts the transaction on a thread of its own, through a connection of its own
    /// (`SQLiteStore.importConnection`): the store's writing connection is opened only once
    /// something will be written, as GRDB writes to a database when it opens one, and a zip the
    /// pass refuses must leave the store's files as they were.
    ///
    /// The thread holds no reference to the store: a store still held when the process exits
    /// never closes its connections, and its write-ahead log is then left unmerged (a thread
    /// that kept it until just after the import's end did that in one run of six under load).
    init(_ store: SQLiteStore) {
        let (root, revisionWatch) = (store.root, store.revisionWatch)
        Thread { [self] in
            let result = Result {
                // The write-ahead log is left as empty as it was found (`SQLiteStore.emptyLog`).
                let logWasEmpty = (FileStatus(root.appending(path: SQLiteStore.logName).path)?.size ?? 0) == 0
                let connection = try SQLiteStore.importConnection(root)
                defer {
                    if logWasEmpty { SQLiteStore.emptyLog(connection) }
                    try? connection.close()
                }
                // SQLite's default page cache (2 MiB), not the 8 MiB of an import's rows after
                // its pass (`withImportCache`): beside the pass, whose memory is still in use,
                // 8 MiB took a 30,000-article import over the 64 MB goal.
                // IMMEDIATE: the database's write lock is taken at once, so no other writer's
                // commit can come between the issue id read first and the rows.
                var counts: ArticleInserts.Counts = (0, 0)
                try connection.inTransaction(.immediate) { db in
                    counts = try self.write(db)
                    return .commit
                }
                revisionWatch.forget()
                return counts
            }
            if case .failure = result { items.stop() }
            outcome = result
            done.signal()
        }.start()
    }

    /// The observer to hand latest.json's checks.
    var observer: Validator.ArticleObserver { { [self] _, node, members in take(node, members) } }

    private func take(_ node: LocatedJSON, _ members: [LocatedJSON.Member]) {
        guard !gaveUp else { return }
        do {
            if head == nil {
                let issue = ManifestRecords.issue(LocatedJSON(value: .object(members), line: 1, column: 1))
                head = (issue.globalID, issue.images)
                try items.send(.issueImages(PreparedArticle.assetRows(issue.images, issue: 0, writer: writer)))
            }
            guard let head, let record = ManifestRecords.article(node, issueGlobalID: head.globalID) else { return }
            placement += 1
            try items.send(.article(PreparedArticle(record, issue: 0, placement: placement, writer: writer)))
        } catch {
            // The transaction failed (the database is busy, the disk full): `usable` says no,
            // and the import writes the rows after the pass, where a lasting failure is reported.
            gaveUp = true
        }
    }

    /// latest.json's checks have ended (their thread with them): the rows after the last article
    /// go in once the import says how it ends.
    func articlesEnded() { items.close() }

    /// Whether the rows written are the ones `issue` (latest.json read whole) needs.
    func usable(for issue: IssueRecord) -> Bool {
        guard let head, !gaveUp else { return false }
        return head.globalID == issue.globalID && head.images == issue.images
    }

    /// Ends the transaction with `finish` (given the database and the issue's row id, it writes
    /// the issue's row and the rest) and commits it; returns the articles and assets written.
    /// Throws what failed (the transaction is rolled back then).
    func complete(_ finish: @escaping (Database, Int64) throws -> Void) throws -> ArticleInserts.Counts {
        self.finish = finish
        return try end().get()
    }

    /// Rolls the transaction back. Does nothing after `complete`.
    func abandon() { _ = end() }

    private func end() -> Result<ArticleInserts.Counts, any Error> {
        if !ended {
            ended = true
            items.close(failing: finish == nil ? CancellationError() : nil)
            decided.signal()
            done.wait()
        }
        return outcome ?? .failure(CancellationError())
    }

    /// The transaction, on the writer's connection.
    private func write(_ db: Database) throws -> ArticleInserts.Counts {
        // The issue's row comes last: its id is the one AUTOINCREMENT gives next, and the
        // articles' and assets' references to it are checked when the transaction commits.
        let issueID = try Int64.fetchOne(db, sql: """
            SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'issue'), 0), coalesce((SELECT max(id) FROM issue), 0)) + 1
            """) ?? 1
        try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
        var inserts = try ArticleInserts(db, issue: issueID)
        receiving: while true {
            switch try items.receiveOrIdle() {
            case .item(.issueImages(let rows)): try inserts.assets(rows, article: nil)
            case .item(.article(let prepared)): try inserts.article(prepared)
            case .idle:
                try SQLiteStore.insertFiles(files.take(limit: 256), issue: issueID, db)
            case .ended: break receiving
            }
        }
        decided.wait()
        guard let finish else { throw CancellationError() }
        try finish(db, issueID)
        return inserts.counts
    }
}

/// Writes an import's article and asset rows through statements prepared once, keeping the
/// first of a repeated article or asset id (validate warns about it), as Dumpling does.
struct ArticleInserts {
    typealias Counts = (articles: Int, assets: Int)
    private let db: Database
    private let issue: Int64
    private let insertArticle: Statement
    private let insertAsset: Statement
    private let insertSearch: Statement
    private(set) var counts: Counts = (0, 0)

    init(_ db: Database, issue: Int64) throws {
        self.db = db
        self.issue = issue
        insertArticle = try db.cachedStatement(sql: ArticleRow.insertSQL(orIgnore: true))
        insertAsset = try db.cachedStatement(sql: AssetRow.insertSQL(orIgnore: true))
        insertSearch = try db.cachedStatement(sql: SearchText.insertSQL)
    }

    /// Asset rows of the issue (`article` nil) or of one article.
    mutating func assets(_ rows: [AssetRow], article: Int64?) throws {
        for var row in rows {
            row.issueId = issue
            row.articleId = article
            try row.insert(with: insertAsset)
            if db.changesCount > 0 { counts.assets += 1 }
        }
    }

    /// An article's row, its search text and its assets.
    mutating func article(_ prepared: PreparedArticle) throws {
        var row = prepared.row
        row.issueId = issue
        try row.insert(with: insertArticle)
        guard db.changesCount > 0 else { return }
        counts.articles += 1
        let articleID = db.lastInsertedRowID
        try insertSearch.executeBinding(SearchText.values(articleID, prepared.search))
        try assets(prepared.assets, article: articleID)
    }
}

/// An article made ready for its rows off the database's thread: its row, its text as the
/// search index holds it (title, dek, keywords, body), and its assets' rows (images, sounds,
/// videos; each list placed from 1), whose article id is set once the article's row has one.
struct PreparedArticle: Sendable {
    var row: ArticleRow
    var search: [String]
    var assets: [AssetRow]

    init(_ article: ArticleRecord, issue: Int64, placement: Int, writer: JSONWriter) {
        row = ArticleRow(article, issue: issue, placement: placement, writer: writer)
        search = SearchText.fields(title: article.title, dek: article.dek, keywords: article.keywords, body: article.body)
        assets = [article.images, article.sounds, article.videos].flatMap { Self.assetRows($0, issue: issue, writer: writer) }
    }

    static func assetRows(_ list: [AssetRecord], issue: Int64, writer: JSONWriter) -> [AssetRow] {
        list.enumerated().map { AssetRow($0.element, issue: issue, article: nil, placement: $0.offset + 1, writer: writer) }
    }
}
