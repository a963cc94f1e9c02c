import Foundation
import GRDB

/// A local issue store: one SQLite database (GRDB, versioned migrations) and one folder of files
/// per issue. Readers see committed issues only; writers hold `StoreLock`.
///
/// Layout: `store.sqlite`, `issues/<apple_id>.<token>/` (the zip's files), `staging/` (imports in
/// progress), `.lock`.
public final class IssueStore: Sendable {
    public let root: URL
    let database: DatabasePool

    /// `--store`, else `$GALLEY_STORE`, else `$XDG_DATA_HOME/galley`, else `~/.local/share/galley`.
    public static func location(given: String?, environment: [String: String]) -> URL {
        if let given { return URL(fileURLWithPath: given) }
        if let store = environment["GALLEY_STORE"], !store.isEmpty { return URL(fileURLWithPath: store) }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return URL(fileURLWithPath: data).appending(path: "galley") }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appending(path: ".local/share/galley")
    }

    /// Opens (creating and migrating as needed) the store at `root`, and removes what an
    /// interrupted import left behind when no other writer is at work.
    public init(at root: URL) throws {
        self.root = root
        do {
            for folder in ["issues", "staging"] {
                try FileManager.default.createDirectory(at: root.appending(path: folder), withIntermediateDirectories: true)
            }
            var configuration = Configuration()
            configuration.busyMode = .timeout(60)
            // Two processes opening a new store at once must not both create its tables: the
            // short migration lock (not the writer lock, which imports hold for long) orders them.
            let migrationLock = try StoreLock(root.appending(path: ".migration-lock"))
            try migrationLock.lock()
            defer { migrationLock.unlock() }
            database = try DatabasePool(path: root.appending(path: "store.sqlite").path, configuration: configuration)
            try StoreSchema.migrator().migrate(database)
        } catch let error as GalleyError {
            throw error
        } catch {
            throw GalleyError("cannot open the store: \(error)", path: root.path,
                              hint: "Check the path and its permissions, or pass another --store.")
        }
        let lock = try StoreLock(root.appending(path: ".lock"))
        if lock.tryLock() {
            defer { lock.unlock() }
            try? removeLeftovers()
        }
    }

    var issuesFolder: URL { root.appending(path: "issues") }
    var stagingFolder: URL { root.appending(path: "staging") }

    /// Staging folders, and issue folders no issue row points at: what an interrupted import or
    /// deletion leaves. Call with the lock held.
    @discardableResult
    func removeLeftovers() throws -> [String] {
        var removed: [String] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: stagingFolder.path)) ?? [] {
            try? FileManager.default.removeItem(at: stagingFolder.appending(path: name))
            removed.append("staging/\(name)")
        }
        let referenced = Set(try database.read { db in try String.fetchAll(db, sql: "SELECT folder FROM issue") })
        for name in (try? FileManager.default.contentsOfDirectory(atPath: issuesFolder.path)) ?? [] where !referenced.contains(name) {
            try? FileManager.default.removeItem(at: issuesFolder.appending(path: name))
            removed.append("issues/\(name)")
        }
        return removed
    }

    func withWriterLock<T>(_ body: () throws -> T) throws -> T {
        let lock = try StoreLock(root.appending(path: ".lock"))
        try lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
