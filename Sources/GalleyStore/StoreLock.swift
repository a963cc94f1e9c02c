import Foundation
import GalleyCore

/// The store's writer lock (`flock` on `<store>/.lock`): imports and deletions hold it, so two
/// of them run one after the other, and leftovers are cleaned only when nobody holds it.
package final class StoreLock {
    private let fd: Int32

    package init(_ url: URL) throws {
        fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw GalleyError("cannot open the store's lock file", id: .storeFailed, path: url.path) }
    }

    deinit { close(fd) }

    /// Waits for the lock.
    package func lock() throws {
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { throw GalleyError("cannot lock the store: \(String(cString: strerror(errno)))", id: .storeFailed) }
        }
    }

    /// Takes the lock if nobody holds it.
    package func tryLock() -> Bool { flock(fd, LOCK_EX | LOCK_NB) == 0 }

    package func unlock() { flock(fd, LOCK_UN) }
}
