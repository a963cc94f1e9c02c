import Foundation

/// What `stat(2)` says of a path, without Foundation's extra look-ups (owner names and the like).
package struct FileStatus {
    package enum Kind { case file, directory, symlink, other }

    package var kind: Kind
    package var size: Int64
    package var inode: UInt64
    /// The last change of its content (mtime), in nanoseconds since 1970.
    package var modified: Int64

    /// Follows symbolic links when `follow` is true; `nil` when the path does not exist.
    package init?(_ path: String, follow: Bool = true) {
        var info = stat()
        let result = follow ? stat(path, &info) : lstat(path, &info)
        guard result == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .file
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symlink
        default: kind = .other
        }
        size = Int64(info.st_size)
        inode = UInt64(info.st_ino)
        #if canImport(Darwin)
        modified = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        #else
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        #endif
    }

    package static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }
}

/// Which file a path named and how it stood: compares unequal once the path names another
/// file (another device or inode) or the file was written to, truncated, renamed or linked
/// (its size, modification or change time moved; the change time moves with every one of
/// those). For a file read in several passes that must all see the same bytes.
package struct FileIdentity: Sendable, Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Int64
    var changed: Int64

    package init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        #if canImport(Darwin)
        modified = Int64(status.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(status.st_mtimespec.tv_nsec)
        changed = Int64(status.st_ctimespec.tv_sec) * 1_000_000_000 + Int64(status.st_ctimespec.tv_nsec)
        #else
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        changed = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
        #endif
    }

    /// The file `path` names now (following symbolic links), or nil when there is none.
    package init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }
}

/// Writes `text` to a new file at `path` (replacing one that exists) with plain `write(2)`:
/// no `fsync` per file, which Foundation's `Data.write` does and which costs seconds when a
/// site has thousands of pages. Callers that need durability for one file sync it themselves.
package func writeFile(_ path: String, _ text: String, permissions: mode_t = 0o644) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, permissions)
    guard fd >= 0 else { throw GalleyError("cannot write: \(String(cString: strerror(errno)))", id: .outputUnwritable, path: path) }
    defer { close(fd) }
    var text = text
    let failure = text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
    if failure != 0 { throw GalleyError("cannot write: \(String(cString: strerror(failure)))", id: .outputUnwritable, path: path) }
}

/// Writes every byte of `bytes` to `fd` (`write(2)` may take fewer, or be interrupted), at the
/// file's offset, or at `position` with `pwrite(2)` (so a chunk written again lands where it
/// belongs): 0 when done, else the `errno` that stopped it.
package func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at position: Int64? = nil) -> Int32 {
    guard let base = bytes.baseAddress else { return 0 }
    var offset = 0
    while offset < bytes.count {
        let written = if let position {
            pwrite(fd, base + offset, bytes.count - offset, off_t(position) + off_t(offset))
        } else {
            write(fd, base + offset, bytes.count - offset)
        }
        if written < 0 {
            if errno == EINTR { continue }
            return errno
        }
        if written == 0 { return EIO }
        offset += written
    }
    return 0
}

/// `count` bytes of `fd` from `offset`, with `pread(2)` (which may take fewer, or be
/// interrupted): fewer only where the file ends. Throws the `errno` that stopped it, as a
/// `POSIXError`. For small reads at known places, where a `FileHandle` costs an `fstat` and a
/// `Data` per read and a seek of its own.
package func readAll(_ fd: Int32, at offset: UInt64, count: Int) throws -> [UInt8] {
    guard count > 0 else { return [] }
    var failure: Int32 = 0
    // Not zero-filled first: only the bytes read are kept (the fill was 1.5% of a pack that
    // reads the first 4 KiB of 60,000 pictures).
    let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        initialized = 0
        guard let base = buffer.baseAddress else { return }
        while initialized < count {
            let got = pread(fd, base + initialized, count - initialized, off_t(offset) + off_t(initialized))
            if got < 0 {
                if errno == EINTR { continue }
                failure = errno
                return
            }
            if got == 0 { return }
            initialized += got
        }
    }
    guard failure == 0 else { throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO) }
    return bytes
}

/// The whole of the regular file at `path`, with `open`, `fstat` and `read`. For the small text
/// files a source folder is made of (each article's Markdown and YAML): `Data(contentsOf:)`
/// and Foundation's UTF-8 decoding were 0.4 CPU-seconds of packing 30,000 articles.
/// Throws the `errno` that stopped it as a `POSIXError`; anything but a regular
/// file (a folder, a FIFO, which would wait for a writer) is `EINVAL`.
package func readWholeFile(_ path: String) throws -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    guard status.st_mode & S_IFMT == S_IFREG else { throw POSIXError(.EINVAL) }
    // The size is a hint: a file that grew meanwhile is read to its end all the same. The end
    // is found with a one-byte read (a 64 KiB buffer for it was an allocation a file, 60,000
    // of them in a pack's read-ahead).
    var bytes = try readAll(fd, at: 0, count: Int(status.st_size))
    while true {
        var byte: UInt8 = 0
        let got = pread(fd, &byte, 1, off_t(bytes.count))
        if got < 0 {
            if errno == EINTR { continue }
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        if got == 0 { return bytes }
        bytes.append(byte)
        bytes += try readAll(fd, at: UInt64(bytes.count), count: 64 * 1024)
    }
}

/// The file at `path` read whole when it holds exactly `size` bytes; nil when it holds another
/// number (it changed since it was measured). Never reads more than `size + 1` bytes, whatever
/// the file has become, and never waits (`O_NONBLOCK`, and `pread`, which a FIFO put in its
/// place refuses with `ESPIPE`).
/// For pack's read-ahead of the media it planned.
package func readFile(_ path: String, expecting size: Int) throws -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    // One byte more than expected: a short read of a regular file is its end.
    let bytes = try readAll(fd, at: 0, count: size + 1)
    return bytes.count == size ? bytes : nil
}

/// The names in a folder as the file system stores them (bytes), with `readdir(3)`: Foundation
/// decodes names that are not UTF-8 into replacement characters, and such a name then matches
/// no file, so a folder listed through it would be lost without a word. `nil` when the folder
/// cannot be read, or holds more than `limit` names. Leaves out `.` and `..`.
package func rawDirectoryNames(_ path: String, limit: Int = .max) -> [[UInt8]]? {
    guard let directory = opendir(path) else { return nil }
    defer { closedir(directory) }
    var names: [[UInt8]] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { buffer in Array(buffer.prefix { $0 != 0 }) }
        if name == [0x2E] || name == [0x2E, 0x2E] { continue }
        if names.count == limit { return nil }
        names.append(name)
    }
    return names
}
