import Foundation

/// A file's SHA-256 and size, read once in bounded memory; optionally copied on the way.
public struct FileDigest: Sendable, Hashable {
    /// Lowercase hex.
    public var sha256: String
    public var size: Int64

    /// Reads `path` (1 MiB at a time), writing each chunk to `copy` when given (created, never
    /// over an existing file), and returns the digest of what was read. The copy is flushed to
    /// disk before returning, so it survives a crash once its name is recorded.
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
        let hasher = SHA256Hasher()
        var size: Int64 = 0
        let capacity = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        guard let base = buffer.baseAddress else { throw FileDigestError(path: path, code: ENOMEM) }
        while true {
            let count = read(input, base, capacity)
            if count < 0 {
                if errno == EINTR { continue }
                throw FileDigestError(path: path, code: errno)
            }
            if count == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            hasher.update(chunk)
            size += Int64(count)
            if output >= 0, let copy {
                let failure = writeAll(output, chunk)
                if failure != 0 { throw FileDigestError(path: copy, code: failure) }
            }
        }
        if output >= 0, let copy, fsync(output) != 0 { throw FileDigestError(path: copy, code: errno) }
        return FileDigest(sha256: hasher.finalizeHex(), size: size)
    }
}

/// A read or write failure of `FileDigest`, with the path and the system's words for it.
public struct FileDigestError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var code: Int32
    public var description: String { "\(path): \(String(cString: strerror(code)))" }
}
