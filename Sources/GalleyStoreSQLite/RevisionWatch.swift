import Foundation
import GalleyCore
import GalleyStore

/// Answers "what is the store's revision" without a database read while the database's files
/// are as they were at the last read. `serve` asks on every request (its ETags and kept answers
/// hang on it), and a SQLite read, cheap as it is, takes the write-ahead log's read lock
/// (`fcntl` on the shared-memory file) and a pooled connection: as much CPU as the rest of a
/// cached answer. Two `stat` calls take none of that.
///
/// Every commit writes to the write-ahead log (`store.sqlite-wal`), and a checkpoint or another
/// journal mode writes the database file: a change to the store changes the size, inode or
/// modification time of one of the two. Modification times are coarse (a kernel clock tick),
/// so two commits in one tick could leave the same stamps: a reading is only trusted once the
/// files were quiet for `quiet` before their stamps were taken; until then every call reads the
/// database. A reading is taken as stamps first, value second, so the value is never older than
/// the stamps it is kept with. The one thing it cannot see is a writer stopped for longer than
/// `quiet` between writing its commit to the log and publishing it; SQLite does both in one call.
final class RevisionWatch: @unchecked Sendable {
    struct Stamp: Equatable {
        var size: Int64
        var inode: UInt64
        var modified: Int64

        init?(_ path: String) {
            guard let status = FileStatus(path) else { return nil }
            size = status.size
            inode = status.inode
            modified = status.modified
        }
    }

    let database: String
    let log: String
    let quiet: Int64
    private let lock = NSLock()
    private var trusted: (database: Stamp?, log: Stamp?, revision: Int64)?
    /// When (monotonic nanoseconds) the files last matched `trusted`; nil: not since `forget`.
    /// (Not 0 for "never": the monotonic clock starts at boot, so on a machine up for less
    /// than a window, 0 would still be inside it.)
    private var confirmed: UInt64?

    /// Watches `database` and its write-ahead log; `quiet` in nanoseconds.
    init(database: String, quiet: Int64 = 1_000_000_000) {
        self.database = database
        log = database + "-wal"
        self.quiet = quiet
    }

    /// Makes the next call with a window look at the files (after a write by this process).
    func forget() {
        lock.lock()
        confirmed = nil
        lock.unlock()
    }

    /// The revision: the kept one while the files' stamps are as they were when it was read,
    /// else `read()`'s. With a `window` (nanoseconds), a kept revision whose stamps matched less
    /// than `window` ago is answered without looking at the files again.
    func revision(within window: UInt64 = 0, _ read: () throws -> Int64) rethrows -> Int64 {
        if window > 0 {
            let now = DispatchTime.now().uptimeNanoseconds
            lock.lock()
            if let trusted, let confirmed, now &- confirmed < window {
                lock.unlock()
                return trusted.revision
            }
            lock.unlock()
        }
        let now = Int64(Date().timeIntervalSince1970 * 1e9)
        let databaseStamp = Stamp(database)
        let logStamp = Stamp(log)
        let stamped = DispatchTime.now().uptimeNanoseconds
        lock.lock()
        if let trusted, trusted.database == databaseStamp, trusted.log == logStamp {
            confirmed = stamped
            lock.unlock()
            return trusted.revision
        }
        lock.unlock()
        let value = try read()
        let newest = max(databaseStamp?.modified ?? .min, logStamp?.modified ?? .min)
        lock.lock()
        trusted = now - newest >= quiet ? (databaseStamp, logStamp, value) : nil
        confirmed = stamped
        lock.unlock()
        return value
    }
}
