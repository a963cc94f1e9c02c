import Foundation
import GRDB
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit

/// A local issue store: one SQLite database (GRDB, versioned migrations) and one folder of files
/// per issue. Readers see committed issues only; writers hold `StoreLock`.
///
/// Layout: `store.sqlite`, `issues/<apple_id>.<token>/` (the zip's files), `packages/<sha256>.zip`
/// (the zips imported, for `serve`'s feed), `staging/` (imports in progress), `.lock`.
public final class SQLiteStore: IssueStore {
    public let root: URL
    public let access: StoreAccess
    /// The connection reads go through.
    package let database: any DatabaseReader
    private let writerSlot: WriterSlot
    /// `revision()` without a read while the database's files are unchanged.
    let revisionWatch: RevisionWatch
    /// Whether the write-ahead log was there when the store was opened (see `deinit`).
    private let logExisted: Bool

    /// Opens the store at `root`, and removes what an interrupted import left behind when no
    /// other writer is at work. When the store does not exist yet or needs a migration, it is
    /// created and migrated first (even for `.read`). Otherwise reads go through a read-only
    /// connection, and with `.write` the writing connection is opened only when something is
    /// written: opening one writes to the database (GRDB makes the write-ahead log non-empty
    /// with a throwaway table), so an import that changes nothing must not open it.
    /// `statements` is told every statement the read-only connections run, its values in
    /// place (the plan tests explain each one).
    public init(at root: URL, access: StoreAccess = .create, statements: (@Sendable (String) -> Void)? = nil) throws {
        self.root = root
        let path = root.appending(path: Self.databaseName).path
        revisionWatch = RevisionWatch(database: path)
        logExisted = FileStatus(path + "-wal") != nil
        var readOnly: DatabasePool?
        if FileManager.default.fileExists(atPath: path) {
            do {
                readOnly = try Self.openReadOnly(path, root: root, statements: statements)
            } catch where access == .create {
                // Another process may be making this store this very moment (its database is
                // there, its tables not yet): opening it for writing waits for that under the
                // migration lock, and says what is wrong if anything still is.
                readOnly = nil
            }
        } else if access != .create {
            let what = FileStatus(root.path) == nil ? "no store here" : "not a Galley store (it has no store.sqlite)"
            throw GalleyError(what, id: .storeMissing, path: root.path,
                              hint: "Import a zip first (galley import ISSUE.zip --store \(root.path)), or pass the right --store or GALLEY_STORE.")
        }
        if let readOnly {
            self.access = access == .create ? .write : access
            database = readOnly
            writerSlot = WriterSlot(nil)
        } else {
            self.access = .write
            let pool = try Self.openForWriting(root)
            database = pool
            writerSlot = WriterSlot(pool)
        }
        if hasLeftovers() {
            let lock = try StoreLock(root.appending(path: ".lock"))
            if lock.tryLock() {
                defer { lock.unlock() }
                _ = try? removeLeftovers()
            }
        }
    }

    /// Read-only connections make the write-ahead log and its index (`-wal`, `-shm`) when they
    /// are not there, and never remove them: only the last writable connection to close does.
    /// So a query, or an import that changed nothing, left both beside the database. When this
    /// store found no log, it closes its connections and opens and closes one writable
    /// connection (which writes nothing): SQLite then checkpoints and removes both, unless
    /// another process still has the database open, whose last connection will.
    deinit {
        guard !logExisted else { return }
        let path = root.appending(path: Self.databaseName).path
        try? (database as? DatabasePool)?.close()
        writerSlot.close()
        guard FileStatus(path + "-wal") != nil, let last = try? DatabaseQueue(path: path) else { return }
        try? last.close()
    }

    /// Read-only connections, or nil when the store's schema is older than this Galley's (the
    /// caller then opens it for writing, which migrates it). A pool, not one queue: `serve`'s
    /// concurrent requests read side by side (the store is in WAL mode) instead of in turn.
    private static func openReadOnly(_ path: String, root: URL, statements: (@Sendable (String) -> Void)?) throws -> DatabasePool? {
        do {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.busyMode = .timeout(60)
            // Each connection keeps its own page cache; `serve` answers most requests from kept
            // answers (its ResponseCache), so two readers, one per core here, are enough.
            configuration.maximumReaderCount = 2
            configuration.prepareDatabase { db in
                SearchText.register(db)
                SearchRank.register(db)
                if let statements { db.trace(options: .statement) { statements($0.expandedDescription) } }
            }
            let pool = try DatabasePool(path: path, configuration: configuration)
            return try pool.read(StoreSchema.isCurrent) ? pool : nil
        } catch {
            throw Self.failure("cannot open the store", error, root)
        }
    }

    /// A failure to open the store, in words (GRDB's for the database, the file system's for folders).
    static func failure(_ what: String, _ error: any Error, _ root: URL) -> GalleyError {
        if let database = error as? DatabaseError {
            // SQLite says "disk I/O error" (or "database or disk is full") when a write is
            // refused for want of room: a full disk, or a limit on file sizes (`ulimit -f`).
            let room = database.resultCode == .SQLITE_IOERR || database.resultCode == .SQLITE_FULL
            return GalleyError("\(what): \(database.message ?? "\(database.resultCode)")", id: .storeFailed, path: root.path,
                               hint: room
                                   ? "The disk may be full, or a limit on file sizes reached (`ulimit -f`): make room (`df -h` shows what is free) and run the command again."
                                   : "Check that it is a Galley store and that you may read and write it; `galley store check` tells what is wrong.")
        }
        let (reason, hint) = FileSystemError.describe(error)
        return GalleyError("\(what): \(reason)", id: .storeFailed, path: root.path, hint: hint)
    }

    /// The connection writes go through, opened on first use (see `init`).
    package func writer() throws -> any DatabaseWriter {
        precondition(access != .read, "the store was opened for reading")
        return try writerSlot.get { try Self.openForWriting(root) }
    }

    /// What every connection that writes the store is opened with: a minute's wait for the
    /// write lock, and the search text's SQL functions (the search index's view calls them).
    private static func writingConfiguration() -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(60)
        configuration.prepareDatabase { db in
            SearchText.register(db)
            SearchRank.register(db)
        }
        return configuration
    }

    /// A connection for one import's transaction beside its pass (`BesideRows`), configured as
    /// the writing one is. Unlike that one (a `DatabasePool`, which makes the write-ahead log
    /// non-empty when it opens), opening it writes nothing; a transaction rolled back on it
    /// leaves the database as it was (pages it spilled into the write-ahead log are no commit's,
    /// and `emptyLog` takes them out).
    static func importConnection(_ root: URL) throws -> DatabaseQueue {
        do {
            return try DatabaseQueue(path: root.appending(path: databaseName).path, configuration: writingConfiguration())
        } catch {
            throw failure("cannot open the store", error, root)
        }
    }

    /// Merges the write-ahead log into the database and empties it, when no reader is in the
    /// way within 50 ms (else it is left for the next checkpoint; nothing is lost either way).
    /// For the end of `importConnection`'s transaction, when the log was empty before it: one
    /// rolled back after it outgrew its page cache left pages no commit made in the log, and a
    /// committed one its pages; with the store's other connections read-only, none of them
    /// would merge and remove the log when the process ends, as SQLite's last writing
    /// connection to close does. A refused import leaves the store's files as they were.
    static func emptyLog(_ connection: DatabaseQueue) {
        try? connection.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA busy_timeout = 50")
            _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// A write transaction through `writer()`; once it is over, `recentRevision()` looks at the
    /// files again, so this process's next answers show its own write at once.
    package func write<T>(_ updates: (Database) throws -> T) throws -> T {
        defer { revisionWatch.forget() }
        return try writer().write(updates)
    }

    /// The writing connection once it is open. Its state is behind a lock, so the store stays
    /// `Sendable` for `serve`'s concurrent requests.
    private final class WriterSlot: @unchecked Sendable {
        private let lock = NSLock()
        private var pool: DatabasePool?

        init(_ pool: DatabasePool?) { self.pool = pool }

        /// Closes the writing connection, if it was opened.
        func close() {
            lock.lock()
            defer { lock.unlock() }
            try? pool?.close()
            pool = nil
        }

        func get(_ open: () throws -> DatabasePool) throws -> DatabasePool {
            lock.lock()
            defer { lock.unlock() }
            if let pool { return pool }
            let opened = try open()
            pool = opened
            return opened
        }
    }

    /// The store's database file, beside its folders (`folders`); SQLite adds `-wal` and `-shm`.
    static let databaseName = "store.sqlite"

    /// Whether `folder` holds a store (its database file).
    public static func exists(at folder: URL) -> Bool {
        FileStatus(folder.appending(path: databaseName).path)?.kind == .file
    }
    /// The database's write-ahead log.
    static let logName = databaseName + "-wal"
    /// The store's folders: issues' files, imports on their way in, kept zips.
    static let issuesName = "issues", stagingName = "staging", packagesName = "packages"
    static let folders = [issuesName, stagingName, packagesName]
    /// Held while a store is made or migrated, so that two processes do not both do it.
    static let migrationLockName = ".migration-lock"

    /// The store's folders, made again when missing.
    static func makeFolders(_ root: URL) throws {
        for folder in folders {
            try FileManager.default.createDirectory(at: root.appending(path: folder), withIntermediateDirectories: true)
        }
    }

    private static func openForWriting(_ root: URL) throws -> DatabasePool {
        // A store made here that cannot be finished (a full disk: its database's first pages
        // cannot be written) goes again, with the folders made for it (`abandonNew`).
        var new = false
        var made: [URL] = []
        var opened = false
        // Folders made before the lock could be taken (a folder one may not write into).
        defer { if !opened && !new { FolderMaker.removeEmpty(made) } }
        do {
            made = try FolderMaker.make(root, what: "the store's folder")
            // Two processes making one new store at once (two first imports) must not both
            // create its tables, nor one take away what the other made: the short migration
            // lock (not the writer lock, which imports hold for long) orders them, and whether
            // the store is new is decided under it.
            let migrationLock = try StoreLock(root.appending(path: migrationLockName))
            try migrationLock.lock()
            defer {
                if new && !opened { abandonNew(root, made: made) }
                migrationLock.unlock()
            }
            new = FileStatus(root.appending(path: databaseName).path) == nil
            try makeFolders(root)
            var configuration = writingConfiguration()
            // 16 KiB pages for a new store (an existing one keeps its own; this must come before
            // the write-ahead log is turned on, which GRDB does after this). An article's row
            // holds its HTML body and the search index its text, a few KiB each: in 4 KiB pages
            // they spill into chains of overflow pages; 16 KiB pages hold them, and halve the
            // time an import's rows take (`bench/import_bench.py` at 30,000 articles). The
            // store's queries (`bench/store_bench.py`) are as fast or faster.
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA page_size = 16384") }
            let database = try DatabasePool(path: root.appending(path: databaseName).path, configuration: configuration)
            try StoreSchema.migrate(database)
            opened = true
            return database
        } catch let error as GalleyError {
            throw error
        } catch {
            throw failure("cannot open the store", error, root)
        }
    }

    /// Takes away what the making of a new store at `root` left (`made`: the folders made for
    /// it, the outermost last), unless an issue is on its way in (another process made the same
    /// store meanwhile and imports into it: each import stages in `staging/` first).
    private static func abandonNew(_ root: URL, made: [URL]) {
        let manager = FileManager.default
        for folder in [issuesName, stagingName] {
            if let names = try? manager.contentsOfDirectory(atPath: root.appending(path: folder).path), !names.isEmpty { return }
        }
        if let outermost = made.last {
            try? manager.removeItem(at: outermost)
            return
        }
        // A folder that was there already (an empty one given as the store): only the store's own.
        for name in [databaseName, logName, databaseName + "-shm", migrationLockName] {
            try? manager.removeItem(at: root.appending(path: name))
        }
        FolderMaker.removeEmpty(folders.map { root.appending(path: $0) })
    }

    var issuesFolder: URL { root.appending(path: Self.issuesName) }
    var stagingFolder: URL { root.appending(path: Self.stagingName) }

    /// The names in `staging/`, the folders in `issues/` no issue row points at, and the zips in
    /// `packages/` no issue row names.
    private func leftovers() throws -> (staging: [String], issues: [String], packages: [String]) {
        let staging = (try? FileManager.default.contentsOfDirectory(atPath: stagingFolder.path)) ?? []
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: issuesFolder.path)) ?? []
        let zips = (try? FileManager.default.contentsOfDirectory(atPath: packagesFolder.path)) ?? []
        if folders.isEmpty && zips.isEmpty { return (staging, [], []) }
        // Every store open asks this: one query for both.
        let rows = try database.read { db in try Row.fetchAll(db, sql: "SELECT folder, packageSHA256 FROM issue") }
        let referenced = Set(rows.map { $0["folder"] as String })
        let packages = Set(rows.compactMap { ($0["packageSHA256"] as String?).map { $0 + ".zip" } })
        return (staging, folders.filter { !referenced.contains($0) }, zips.filter { !packages.contains($0) })
    }

    /// Whether an interrupted import or deletion may have left something behind: `staging/`
    /// holds something (a pass's folder, or a write's mark: `markWriting`). One small listing,
    /// whatever the store holds; reading every issue row here made each command's open grow
    /// with the store (`bench/capacity_bench.py`).
    func hasLeftovers() -> Bool {
        !((try? FileManager.default.contentsOfDirectory(atPath: stagingFolder.path)) ?? []).isEmpty
    }

    /// Marks, in `staging/`, a write about to change `issues/` or `packages/` (an import's
    /// switch, a deletion): a process killed before the returned closure runs leaves the mark,
    /// and the next open then sweeps. Call with the writer lock held.
    func markWriting() throws -> () -> Void {
        let mark = stagingFolder.appending(path: "writing-\(UUID().uuidString.lowercased())")
        do {
            try Data().write(to: mark)
        } catch {
            throw Self.failure("cannot write the store", error, root)
        }
        return { try? FileManager.default.removeItem(at: mark) }
    }

    /// Staging folders, and issue folders no issue row points at: what an interrupted import or
    /// deletion leaves. Call with the lock held.
    @discardableResult
    func removeLeftovers() throws -> [String] {
        let found = try leftovers()
        var removed: [String] = []
        for name in found.staging {
            try? FolderRemoval.remove(stagingFolder.appending(path: name).path)
            removed.append("staging/\(name)")
        }
        for name in found.issues {
            try? FolderRemoval.remove(issuesFolder.appending(path: name).path)
            removed.append("issues/\(name)")
        }
        for name in found.packages {
            try? FileManager.default.removeItem(at: packagesFolder.appending(path: name))
            removed.append("packages/\(name)")
        }
        return removed
    }

    func withWriterLock<T>(_ body: () throws -> T) throws -> T {
        precondition(access != .read, "the store was opened for reading")
        let lock = try StoreLock(root.appending(path: ".lock"))
        try lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
