import Foundation
internal import CLinux

/// A file's SHA-256 and size, read once in bounded memory; optionally copied on the way.
public struct FileDigest: Sendable, Hashable {
    /// Lowercase hex.
    public var sha256: String
    public var size: Int64

    public init(sha256: String, size: Int64) {
        self.sha256 = sha256
        self.size = size
    }

    /// Reads `path` (1 MiB at a time), writing each chunk to `copy` when given (created, never
    /// over an existing file), and returns the digest of what was read. The copy is not flushed to
    /// disk (no `fsync`): like the files an import extracts, it is safe at once against a killed
    /// process, and against a power cut once the system has written it back (`galley store
    /// check` finds a file that was lost). An fsync of a 190 MB zip cost each import a second.
    public static func of(_ path: String, copyingTo copy: String? = nil) throws -> FileDigest {
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw FileDigestError(path: path, code: errno) }
        defer { close(input) }
        var output: Int32 = -1
        if let copy {
            output = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard output >= 0 else { throw FileDigestError(path: copy, code: errno) }
        }
        defer { if output >= 0 { close(output) } }
        if output >= 0, let copy {
            // The kernel copies (copy_file_range: no trip through this process, 3x faster than
            // read and write here), then the copy is hashed where it lies (`mappedDigest`): the
            // digest names the bytes kept.
            switch kernelCopy(from: input, to: output) {
            case .copied: return try mappedDigest(copy)
            case .failed(let code): throw FileDigestError(path: copy, code: code)
            case .unsupported: break  // another file system or kernel: read, hash and write below
            }
        }
        let hasher = SHA256Hasher()
        let size = try pump(input, path, into: hasher, copy: copy.map { (output, $0) })
        return FileDigest(sha256: hasher.finalizeHex(), size: size)
    }

    /// The digest of a file this process made and nobody else writes (the kept zip's staged
    /// copy), hashed through 2 MiB read-only mappings of its pages instead of `read`: the pages
    /// the copy left in the page cache are mapped, not copied, which saved 0.13 CPU-seconds of
    /// a 1.9 GB import (SHA-256 and all, 1.31 -> 1.18 s), for under 1 MB more peak memory than
    /// the 1 MiB read buffer. Only for such a file: a mapping of a file another process truncates faults
    /// (SIGBUS) where a `read` would end early, so a user's zip is always read. Falls back to
    /// reading when the system refuses the mapping.
    static func mappedDigest(_ path: String) throws -> FileDigest {
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw FileDigestError(path: path, code: errno) }
        defer { close(input) }
        var status = stat()
        guard fstat(input, &status) == 0 else { throw FileDigestError(path: path, code: errno) }
        let size = Int64(status.st_size)
        let window: Int64 = 2 << 20
        let hasher = SHA256Hasher()
        var offset: Int64 = 0
        while offset < size {
            let length = Int(min(window, size - offset))
            let mapped = mmap(nil, length, PROT_READ, MAP_SHARED | MAP_POPULATE, input, off_t(offset))
            guard let mapped, mapped != MAP_FAILED else {
                // Refused (no memory for the mapping, a file system without it): read instead.
                return try of(path)
            }
            hasher.update(UnsafeRawBufferPointer(start: mapped, count: length))
            munmap(mapped, length)
            offset += Int64(length)
        }
        return FileDigest(sha256: hasher.finalizeHex(), size: size)
    }

    /// Reads `path` to its end into `hasher` (1 MiB at a time) and returns the bytes read: for a
    /// hash that goes on past the file (a download resumed after what it already holds).
    public static func feed(_ path: String, into hasher: SHA256Hasher) throws -> Int64 {
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw FileDigestError(path: path, code: errno) }
        defer { close(input) }
        return try pump(input, path, into: hasher, copy: nil)
    }

    /// The one read loop: `input` to its end, into `hasher`, and written to `copy` when given.
    private static func pump(_ input: Int32, _ path: String, into hasher: SHA256Hasher, copy: (fd: Int32, path: String)?) throws -> Int64 {
        let capacity = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        guard let base = buffer.baseAddress else { throw FileDigestError(path: path, code: ENOMEM) }
        var size: Int64 = 0
        while true {
            let count = read(input, base, capacity)
            if count < 0 {
                if errno == EINTR { continue }
                throw FileDigestError(path: path, code: errno)
            }
            if count == 0 { return size }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            hasher.update(chunk)
            size += Int64(count)
            if let copy {
                let failure = writeAll(copy.fd, chunk)
                if failure != 0 { throw FileDigestError(path: copy.path, code: failure) }
            }
        }
    }
}

private enum KernelCopy { case copied, unsupported, failed(Int32) }

/// Copies all of `input` to `output` with copy_file_range(2). `.unsupported` when the kernel or
/// the file systems cannot (nothing was written then).
private func kernelCopy(from input: Int32, to output: Int32) -> KernelCopy {
    var copiedAny = false
    while true {
        let count = galley_copy_file_range(input, nil, output, nil, 1 << 30, 0)
        if count < 0 {
            let code = errno
            if code == EINTR { continue }
            if !copiedAny && [ENOSYS, EXDEV, EINVAL, EOPNOTSUPP, EBADF].contains(code) { return .unsupported }
            return .failed(code)
        }
        if count == 0 { return .copied }
        copiedAny = true
    }
}

/// A read or write failure of `FileDigest`, with the path and the system's words for it.
public struct FileDigestError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var code: Int32
    public var description: String { "\(path): \(String(cString: strerror(code)))" }
}
