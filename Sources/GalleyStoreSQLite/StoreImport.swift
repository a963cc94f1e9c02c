import Foundation
import GRDB
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit

extension SQLiteStore: ImportTarget {
    /// Imports one zip: validate's checks on the central directory first (`ImportJob.open`: any
    /// error refuses it before the store is touched), then latest.json's checks beside the one
    /// streaming pass that inflates every file into a staging folder while the rest of
    /// validate's checks run on it (CRCs, real sizes, media), then one transaction that swaps the
    /// issue's rows and points them at the new folder, then removal of the old folder. A zip any
    /// check refuses leaves only the staging folder, removed at once; a process killed at any
    /// moment leaves the old issue or the new one, complete.
    ///
    /// An issue already in the store is replaced only when the zip's `last_updated` is newer
    /// (or with `force`); the same version is a no-op; an older one is refused. Three cases run
    /// latest.json's checks and the versions before the pass instead (`extractsBeside`): the job
    /// asks for it, latest.json is not the zip's first entry, or the store holds the same files
    /// (or a newer version) under the zip's folder name, so that a re-import that changes
    /// nothing extracts nothing.
    public func importZip(_ job: ImportJob) throws -> ImportResult {
        try job.run(into: self)
    }

    package func checksBeside(_ job: ImportJob) throws -> Bool { try extractsBeside(job) }

    package func withImportSession<T>(_ job: ImportJob, _ body: (SQLiteImport) throws -> T) throws -> T {
        try withWriterLock {
            let session = SQLiteImport(self, rowsBeside: Self.writesRowsBeside(job.opened))
            // Whatever ends the import before the commit rolls back the rows written beside it.
            defer { session.rows?.abandon() }
            return try body(session)
        }
    }

    /// Whether the articles' rows of `opened` go beside the pass, as its policy says.
    static func writesRowsBeside(_ opened: ImportGate.Opened) -> Bool {
        switch opened.rowsBeside {
        case .never: false
        case .whenLarge: BesideRows.pays(manifestBytes: opened.manifestBytes, zipBytes: opened.facts.declaredBytes)
        case .always: true
        }
    }

    /// The stored issue a zip with these fields would replace (same global id or apple_id), with
    /// its versions as the rule reads them.
    fileprivate func storedIssue(_ issue: IssueRecord) throws -> (held: IssueRow, versions: ImportVersions.Stored)? {
        let row = try database.read { db in
            try IssueRow.filter(IssueRow.Columns.globalID == issue.globalID || IssueRow.Columns.appleID == issue.appleID).fetchOne(db)
        }
        return row.map {
            ($0, ImportVersions.Stored(appleID: $0.appleID, lastUpdated: $0.lastUpdated, lastUpdatedMS: $0.lastUpdatedMS,
                                       contentDigest: $0.contentDigest))
        }
    }

    /// What an import that changed nothing answers: the stored issue's counts and package.
    fileprivate func unchanged(_ existing: IssueRow?, issue: IssueRecord, path: String, files: Int, warnings: [Diagnostic]) throws -> ImportResult {
        let counts = try existing.map { existing in
            try database.read { db in
                (try ArticleRow.filter(ArticleRow.Columns.issueId == existing.id).fetchCount(db),
                 try AssetRow.filter(AssetRow.Columns.issueId == existing.id).fetchCount(db))
            }
        } ?? (0, 0)
        return ImportResult(path: path, status: .unchanged, appleID: issue.appleID, globalID: issue.globalID,
                            lastUpdated: DumplingDate.rfc3339(issue.lastUpdated), articles: counts.0, assets: counts.1,
                            files: files, package: existing?.package, warnings: warnings)
    }

    /// Whether latest.json is checked beside the pass that extracts the files (else the checks,
    /// the versions, then the pass, in turn): latest.json must be the first entry, and the zip
    /// must look like it changes the store. One that holds the same files as the stored issue,
    /// or whose latest.json says in its first bytes (`ImportGate.Opened.peekIssue`) that it is
    /// no newer than the stored issue, takes the other way, where the versions refuse it (or
    /// change nothing) before a file is extracted: beside, an older 1.9 GB issue was extracted
    /// and its zip copied, seconds and twice its size on disk, to be refused. The peek only
    /// picks the way; both ways decide every zip alike.
    func extractsBeside(_ job: ImportJob) throws -> Bool {
        let opened = job.opened
        guard !job.checksFirst, opened.checksBeside else { return false }
        if job.force { return true }
        // The issue of the zip's folder name (its apple_id once the checks agree), one row read:
        // a new issue goes beside at once, and only a held one's latest.json is peeked at.
        let held = try database.read { db in try IssueRow.filter(IssueRow.Columns.appleID == opened.folder).fetchOne(db) }
        guard let held else { return true }
        if held.contentDigest == opened.facts.contentDigest { return false }  // the same files
        // A held issue whose version cannot be told from the first bytes (latest.json gives its
        // articles first, or no date Galley reads) takes the way where the versions decide
        // before anything is extracted: beside, an older zip would be extracted to be refused.
        guard let storedMS = held.lastUpdatedMS, let peeked = opened.peekIssue(),
              let zipMS = Self.milliseconds(peeked.lastUpdated) else { return false }
        return zipMS > storedMS
    }

    /// What every import does once its pass has passed and the versions said go: the kept zip
    /// to its content-addressed name, the staged folder next to the old one, one transaction
    /// that switches the rows to it, then the old folder and zip removed.
    /// `rows`: the articles' rows written beside the pass, in a transaction this ends.
    fileprivate func commit(_ job: StagedImport, replacing existing: IssueRow?, rows: BesideRows?) throws -> ImportResult {
        let (issue, contentDigest, withheld, status, path) = (job.issue, job.contentDigest, job.withheld, job.status, job.path)
        let pass = job.pass
        let (token, staging, warnings, staged, files) = (pass.token, pass.staging, pass.warnings, pass.kept, pass.files)

        // The articles' rows written beside the pass (`BesideRows`), when they are the ones
        // this issue needs; else they are rolled back now and written below.
        let beside = rows?.usable(for: issue) ?? false
        if !beside { rows?.abandon() }
        // What the pass freed on its threads goes back before the rows' page cache grows
        // (`withImportCache`): the import's peak stays the pass's. (Rows written beside the
        // pass used SQLite's default cache, for that peak.)
        FreedMemory.giveBack()
        // Something will be written: open the writing connection now (it also re-creates the
        // store's folders), then the zip to its content-addressed name. With the rows beside,
        // their transaction is on a connection of its own, and the writing one must not be
        // opened while it is open (GRDB writes when it opens one): only the folders.
        if beside {
            try Self.makeFolders(root)
        } else {
            _ = try writer()
        }
        let unmark = try markWriting()
        defer { unmark() }
        let digest = staged.digest
        let created = try placePackage(staged.staged, digest)
        var committed = false
        defer { if !committed && created { removeUnusedPackages([digest.sha256]) } }

        // 3. The new folder next to the old one, then one transaction that switches to it.
        let folder = "\(SourceTree.zipSafeName(issue.appleID)).\(token)"
        try FileManager.default.moveItem(at: staging, to: issuesFolder.appending(path: folder))
        var counts = (articles: 0, assets: 0)
        var package = ImportResult.Package(sha256: digest.sha256, size: digest.size, version: 0, withheld: withheld)
        do {
            if let rows, beside {
                // The articles' rows are in the open transaction already (`BesideRows`).
                let root = root
                counts = try rows.complete { db, issueID in
                    package.version = try Self.nextPackageVersion(issue.appleID, db)
                    if let id = existing?.id {
                        try Self.deleteRows(ofIssue: id, db)
                    }
                    _ = try Self.insertIssueRow(issue, id: issueID, folder: folder, contentDigest: contentDigest, package: package, db, root: root)
                    // The files' rows not written while the pass ran.
                    try Self.insertFiles(files.dropFirst(rows.files.taken), issue: issueID, db)
                    try Self.countArticles(ofIssue: issueID, db)
                }
            } else {
                try write { db in
                    try Self.withImportCache(db) {
                        package.version = try Self.nextPackageVersion(issue.appleID, db)
                        if let id = existing?.id {
                            try Self.deleteRows(ofIssue: id, db)
                        }
                        counts = try insert(issue, contentDigest: contentDigest, package: package,
                                            manifest: issuesFolder.appending(path: folder).appending(path: "latest.json"),
                                            display: path, files: files, folder: folder, db: db)
                    }
                }
            }
        } catch {
            try? FolderRemoval.remove(issuesFolder.appending(path: folder).path)
            throw SQLiteStore.failure("cannot write the store", error, root)
        }
        committed = true
        if let oldFolder = existing?.folder {
            try? FolderRemoval.remove(issuesFolder.appending(path: oldFolder).path)
        }
        if let old = existing?.packageSHA256, old != digest.sha256 { removeUnusedPackages([old]) }
        var result = ImportResult(path: path, status: status, appleID: issue.appleID, globalID: issue.globalID,
                                  lastUpdated: DumplingDate.rfc3339(issue.lastUpdated), articles: counts.articles, assets: counts.assets,
                                  files: files.count, package: package, warnings: warnings)
        result.rowsWrittenBesideThePass = beside
        return result
    }

    /// Writes the issue's rows: the issue, its images, each article as the manifest streams it
    /// (with its search text and assets), and its files. A repeated article or asset id keeps the
    /// first (validate warns about it), as Dumpling does.
    ///
    /// Parsing latest.json and making the rows (search text, JSON of the metadata) runs on a
    /// thread of its own while this one writes them: at 30,000 articles the two take about the
    /// same time, and the transaction must stay on this thread. (For a large latest.json the
    /// rows were written beside the pass instead, `BesideRows`, and this is not called.)
    private func insert(
        _ issue: IssueRecord, contentDigest: String, package: ImportResult.Package, manifest: URL, display: String, files: ImportPass.Files, folder: String, db: Database
    ) throws -> (articles: Int, assets: Int) {
        let writer = JSONWriter(pretty: false)
        let issueID = try Self.insertIssueRow(issue, id: nil, folder: folder, contentDigest: contentDigest, package: package, db, root: root)
        var inserts = try ArticleInserts(db, issue: issueID)
        try inserts.assets(PreparedArticle.assetRows(issue.images, issue: issueID, writer: writer), article: nil)
        let issueGlobalID = issue.globalID
        try pipeline(capacity: 32, produce: { send in
            let writer = JSONWriter(pretty: false)
            var placement = 0
            try ManifestStream.articles(manifest, display: display, issueGlobalID: issueGlobalID) { article in
                placement += 1
                try send(PreparedArticle(article, issue: issueID, placement: placement, writer: writer))
            }
        }, consume: { prepared in
            try inserts.article(prepared)
        })
        try Self.insertFiles(files, issue: issueID, db)
        try Self.countArticles(ofIssue: issueID, db)
        return inserts.counts
    }

    /// Keeps the issue's article count on its row (the issue listing's `articles`), once its
    /// articles are in: one range of `article_listing`.
    static func countArticles(ofIssue id: Int64, _ db: Database) throws {
        try db.execute(sql: "UPDATE issue SET articleCount = (SELECT COUNT(*) FROM article WHERE issueId = ?) WHERE id = ?",
                       arguments: [id, id])
    }

    /// The issue's own row, with the id given (nil: the next one); returns its id.
    static func insertIssueRow(
        _ issue: IssueRecord, id: Int64?, folder: String, contentDigest: String, package: ImportResult.Package, _ db: Database, root: URL
    ) throws -> Int64 {
        var row = IssueRow(issue, folder: folder, contentDigest: contentDigest, writer: JSONWriter(pretty: false))
        row.id = id
        row.packageSHA256 = package.sha256
        row.packageSize = package.size
        row.packageVersion = package.version
        row.packageWithheld = package.withheld
        try row.insert(db)
        guard let id = row.id else { throw GalleyError("the store did not number the issue's row", path: root.path) }
        return id
    }

    /// The rows of an issue's files.
    static func insertFiles(_ files: some Sequence<ImportPass.ExtractedFile>, issue: Int64, _ db: Database) throws {
        let insertFile = try db.cachedStatement(sql: FileRow.insertSQL(orIgnore: false))
        for file in files {
            try FileRow(id: nil, issueId: issue, name: file.name, size: file.size, sha256: file.sha256).insert(with: insertFile)
        }
    }

    /// Removes an issue's rows: its articles' words from the search index first (the index
    /// reads them back from the articles' rows, v12), then its assets, files and articles, then
    /// the issue. The foreign keys would cascade from the issue alone, but SQLite runs the
    /// assets' cascade once for every article deleted, which made a replacing import of a
    /// 30,000-article issue half as slow again in its deletion.
    static func deleteRows(ofIssue id: Int64, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM articleSearch WHERE rowid IN (SELECT id FROM article WHERE issueId = ?)", arguments: [id])
        for table in ["asset", "file", "article"] {
            try db.execute(sql: "DELETE FROM \(table) WHERE issueId = ?", arguments: [id])
        }
        try db.execute(sql: "DELETE FROM issue WHERE id = ?", arguments: [id])
    }

    /// Runs an import's writes with an 8 MiB page cache, then gives the connection SQLite's
    /// default (2 MiB) back. The rows go into the article id index (`articleGlobalID`) and the
    /// assets' `(issueId, globalID)` index in the order of their random ids: with 2 MiB of
    /// 16 KiB pages, their leaves left the cache between two inserts into the same one, and each
    /// was written to the write-ahead log again and again: at 30,000 articles (a 239 MB
    /// database) 1,266 MB written through the log and the checkpoint, 522 MB with 8 MiB (4 MiB:
    /// 690 MB). The import's peak stays its pass's: what the pass freed is handed back first
    /// (`FreedMemory.giveBack`).
    static func withImportCache<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try db.execute(sql: "PRAGMA cache_size = -8192")
        defer { try? db.execute(sql: "PRAGMA cache_size = -2000") }
        return try body()
    }

    /// A date in either of Dumpling's ISO forms, as milliseconds; `nil` for anything else.
    package static func milliseconds(_ text: String) -> Int64? {
        ISODateTime(parsing: text).map(\.millisecondsSinceEpoch)
    }
}

/// An import into the folder store under its writer lock (`ImportJob.run(into:)`): the articles'
/// rows written beside the pass where the job's policy says it pays (`BesideRows`), the commit
/// by `SQLiteStore.commit`.
package final class SQLiteImport: ImportSession {
    private let store: SQLiteStore
    private let rowsBeside: Bool
    /// The rows written beside the pass, once the job asked for them.
    fileprivate private(set) var rows: BesideRows?

    fileprivate init(_ store: SQLiteStore, rowsBeside: Bool) {
        (self.store, self.rowsBeside) = (store, rowsBeside)
    }

    package var stagingFolder: URL { store.stagingFolder }
    package var root: URL { store.root }

    package func observeArticles() -> (observer: Validator.ArticleObserver, files: ImportPass.FileLedger)? {
        guard rowsBeside else { return nil }
        let rows = rows ?? BesideRows(store)
        self.rows = rows
        return (rows.observer, rows.files)
    }

    package func articlesEnded() { rows?.articlesEnded() }

    /// A stored issue, as an import replaces it: its row.
    package struct Held {
        fileprivate let row: IssueRow
    }

    package func held(_ issue: IssueRecord) throws -> (held: Held, versions: ImportVersions.Stored)? {
        try store.storedIssue(issue).map { (Held(row: $0.held), $0.versions) }
    }

    package func unchanged(_ held: Held?, issue: IssueRecord, path: String, files: Int, warnings: [Diagnostic]) throws -> ImportResult {
        try store.unchanged(held?.row, issue: issue, path: path, files: files, warnings: warnings)
    }

    package func commit(_ staged: StagedImport, replacing held: Held?) throws -> ImportResult {
        try store.commit(staged, replacing: held?.row, rows: rows)
    }
}
