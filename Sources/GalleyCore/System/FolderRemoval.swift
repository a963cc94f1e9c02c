import Foundation

/// Removes a folder and everything in it: an issue's folder when a newer version replaced it or
/// it was deleted, an import's staging.
///
/// Written by hand, not `FileManager.removeItem`: that took 7.5-8 s for the 60,000 files of a
/// 30,000-article issue on the reference machine (1.4 s of it its own CPU), where `rm -rf` took
/// 4.8-6.0 s. Here each name is unlinked relative to its open folder (no path resolved again,
/// nothing stat'ed when the folder says what an entry is), and a folder's files are unlinked by
/// two threads: most of an unlink's time is the file system freeing the file's blocks (on a disk
/// mounted with `discard`, telling the device), which happens outside the folder's lock.
///
/// Links are removed, never followed; a folder is entered only by `openat` with `O_NOFOLLOW`.
package enum FolderRemoval {
    /// Why a folder could not be removed: what `errno` said, at which path.
    package struct Failure: Error, CustomStringConvertible {
        package var path: String
        package var code: Int32
        package var description: String { "cannot remove \(path): \(String(cString: strerror(code)))" }
    }

    /// How many names are read before they are unlinked: a folder is read again from its start
    /// after each batch (POSIX does not say what `readdir` returns once entries it returned are
    /// gone), so memory stays that of one batch whatever the folder holds.
    static let batch = 4096

    /// Removes `path` and everything under it; a path that does not exist is no error, and a
    /// file or a link there is removed itself.
    package static func remove(_ path: String, threads: Int = 2) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            switch errno {
            case ENOENT: return
            case ENOTDIR, ELOOP:
                if unlink(path) != 0 && errno != ENOENT { throw Failure(path: path, code: errno) }
                return
            default: throw Failure(path: path, code: errno)
            }
        }
        defer { close(fd) }
        try removeContents(of: fd, path: path, threads: max(1, threads))
        if rmdir(path) != 0 && errno != ENOENT { throw Failure(path: path, code: errno) }
    }

    /// A name as the folder gives it, bytes and a closing NUL: a name that is not UTF-8 must
    /// reach `unlinkat` as it is (made a `String`, it would be repaired into another name).
    private struct Entry {
        var name: [CChar]
        var isFolder: Bool
        var display: String { String(decoding: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    }

    /// Empties the folder open as `fd`, batch after batch, until a read finds nothing.
    private static func removeContents(of fd: Int32, path: String, threads: Int) throws {
        while true {
            let entries = try read(fd, path: path)
            if entries.isEmpty { return }
            for folder in entries where folder.isFolder {
                let sub = openat(fd, folder.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard sub >= 0 else { throw Failure(path: "\(path)/\(folder.display)", code: errno) }
                defer { close(sub) }
                try removeContents(of: sub, path: "\(path)/\(folder.display)", threads: threads)
                if unlinkat(fd, folder.name, AT_REMOVEDIR) != 0 && errno != ENOENT {
                    throw Failure(path: "\(path)/\(folder.display)", code: errno)
                }
            }
            let files = entries.filter { !$0.isFolder }
            let failures = FirstFailure()
            DispatchQueue.concurrentPerform(iterations: min(threads, max(1, files.count))) { part in
                var index = part
                while index < files.count {
                    // Gone already (another remover) is as good as removed.
                    if unlinkat(fd, files[index].name, 0) != 0 && errno != ENOENT {
                        failures.record(Failure(path: "\(path)/\(files[index].display)", code: errno))
                        return
                    }
                    index += threads
                }
            }
            if let failure = failures.first { throw failure }
        }
    }

    /// Up to `batch` entries of the folder open as `fd`, read from its start through a new
    /// description of it (its own offset).
    private static func read(_ fd: Int32, path: String) throws -> [Entry] {
        let reading = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard reading >= 0 else { throw Failure(path: path, code: errno) }
        guard let directory = fdopendir(reading) else {
            let code = errno
            close(reading)
            throw Failure(path: path, code: code)
        }
        defer { closedir(directory) }
        var entries: [Entry] = []
        while entries.count < batch {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { throw Failure(path: path, code: errno) }
                break
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { start in
                    Array(UnsafeBufferPointer(start: start, count: strlen(start) + 1))
                }
            }
            if name == [46, 0] || name == [46, 46, 0] { continue }  // "." and ".."
            var isFolder = Int32(entry.pointee.d_type) == DT_DIR
            if Int32(entry.pointee.d_type) == DT_UNKNOWN {
                // The file system does not say: ask, without following a link.
                var status = stat()
                if fstatat(fd, name, &status, AT_SYMLINK_NOFOLLOW) == 0 { isFolder = status.st_mode & S_IFMT == S_IFDIR }
            }
            entries.append(Entry(name: name, isFolder: isFolder))
        }
        return entries
    }

    /// The first failure of the unlinking threads.
    private final class FirstFailure: @unchecked Sendable {
        // @unchecked: `failure` is behind `lock`.
        private let lock = NSLock()
        private var failure: Failure?
        func record(_ new: Failure) { lock.withLock { if failure == nil { failure = new } } }
        var first: Failure? { lock.withLock { failure } }
    }
}
