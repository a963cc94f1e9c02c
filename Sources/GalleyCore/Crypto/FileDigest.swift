import Foundation
import Synchronization
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
    /// over an existing file), and returns the digest of what was read. The copy is written with
    /// direct I/O where the file system has it (`directCopy`), else through the page cache. It
    /// is not flushed (no `fsync`): like the files an import extracts, it is safe at once
    /// against a killed process, and against a power cut once the system has written its size
    /// and blocks back (`galley store check` finds a file that was lost). An fsync of a 190 MB
    /// zip cost each import a second.
    ///
    /// `urgency`: raised once whatever waits for the copy is ready, the rest of a direct copy
    /// goes through the page cache (`directCopy`); abandoned, the copy stops, whatever its way.
    public static func of(_ path: String, copyingTo copy: String? = nil, urgency: CopyUrgency? = nil) throws -> FileDigest {
        try of(path, copyingTo: copy, direct: true, urgency: urgency)
    }

    /// `of(_:copyingTo:urgency:)` with the copy hashed on `hashing`'s thread, paired with the
    /// files it hashes (`HashingThread.openCopyLane`; alone here if it has no lane to give).
    package static func of(_ path: String, copyingTo copy: String, urgency: CopyUrgency?, hashingBeside hashing: HashingThread?) throws -> FileDigest {
        try of(path, copyingTo: copy, direct: true, urgency: urgency, beside: hashing)
    }

    /// `of(_:copyingTo:urgency:)`; `direct: false` takes the way of a file system without direct
    /// I/O (for the tests, which have only one kind of file system).
    static func of(_ path: String, copyingTo copy: String?, direct: Bool, urgency: CopyUrgency? = nil,
                   beside hashing: HashingThread? = nil) throws -> FileDigest {
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw FileDigestError(path: path, code: errno) }
        defer { close(input) }
        guard let copy else {
            let hasher = SHA256Hasher()
            let size = try pump(input, path, into: hasher, copy: nil)
            return FileDigest(sha256: hasher.finalizeHex(), size: size)
        }
        if direct, let digest = try directCopy(input, path, to: copy, urgency: urgency, beside: hashing) { return digest }
        let output = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw FileDigestError(path: copy, code: errno) }
        defer { close(output) }
        // The kernel copies (copy_file_range: no trip through this process, 3x faster than
        // read and write here), then the copy is hashed where it lies (`mappedDigest`): the
        // digest names the bytes kept.
        switch kernelCopy(from: input, to: output, urgency: urgency) {
        case .copied: return try mappedDigest(copy, beside: hashing)
        case .failed(let code): throw FileDigestError(path: copy, code: code)
        case .unsupported: break  // another file system or kernel: read, hash and write below
        }
        let hasher = SHA256Hasher()
        let size = try pump(input, path, into: hasher, copy: (output, copy), urgency: urgency)
        return FileDigest(sha256: hasher.finalizeHex(), size: size)
    }

    /// The copy written with direct I/O (`O_DIRECT`: from this process's buffer to the disk,
    /// past the page cache), each chunk hashed as it passes; nil, with nothing left at `copy`,
    /// where the file system has no direct I/O.
    ///
    /// Why not the page cache: a copy made there takes as many new cache pages as the zip has
    /// bytes, beside as many again for the import's extraction, and on a virtual machine whose
    /// host takes free memory back each new page costs a fault in the host; the two writers then
    /// slow each other (bsdtar beside a page-cache copy takes several times the system time it
    /// takes beside a direct one). Direct I/O reuses a few 1 MiB buffers. Its cost, writes that
    /// wait for the disk, is taken on a writer thread of its own, and once `urgency` is raised
    /// the rest goes through the page cache where the disk is slow.
    ///
    /// `beside`: a hashing thread to hash the copy on, paired with its files (an import's), while
    /// this thread reads the next chunk; a chunk goes to the writer once hashed.
    static func directCopy(_ input: Int32, _ path: String, to copy: String, urgency: CopyUrgency?,
                           beside hashing: HashingThread? = nil) throws -> FileDigest? {
        let directFlag = galley_o_direct()
        guard directFlag != 0 else { return nil }
        let output = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | directFlag, 0o644)
        guard output >= 0 else {
            let code = errno
            // A file system without direct I/O: some refuse the flag after creating the file
            // (O_EXCL made sure it is this call's).
            if code == EINVAL {
                unlink(copy)
                return nil
            }
            throw FileDigestError(path: copy, code: code)
        }
        defer { close(output) }
        // Direct writes must start and end on the device's blocks and come from memory aligned to
        // them: 4 KiB serves every block size Linux's file systems use for it. The last chunk is
        // padded with zeros to a block, and the file cut to its size at the end.
        let lane = hashing?.openCopyLane()
        // With a lane, a fourth buffer (the chunk handed to the hashing thread before this one),
        // and half as large, so that the four take less than the three did (an import of
        // 30,000 articles peaks during its pass, within a megabyte or two of 64 MB).
        let capacity = lane == nil ? 1 << 20 : 512 << 10, block = 4096, buffers = lane == nil ? 3 : 4
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity * buffers, alignment: block)
        defer { memory.deallocate() }
        guard let base = memory.baseAddress else { throw FileDigestError(path: path, code: ENOMEM) }
        // The writer takes one chunk at a time and at most one waits for it: once `send` has
        // returned, one buffer is queued and one at most being written, so the third, the next
        // in turn, is free to fill. Declared after the memory, so it ends (`cancel` waits for its
        // thread) before the memory goes.
        let speed = WriteSpeed()
        let writer = BackgroundConsumer<DirectChunk>(capacity: 1) { chunk in
            let bytes = UnsafeRawBufferPointer(start: chunk.base, count: chunk.count)
            let started = ContinuousClock.now
            var failure = writeAll(output, bytes, at: chunk.offset)
            if failure == 0 { speed.add(bytes: chunk.count, since: started) }
            if failure == EINVAL, fcntl(output, F_GETFL) & directFlag != 0 {
                // The file system refused this alignment after all: the rest goes through the
                // page cache (the chunk again, whole, at its place).
                failure = leaveDirectIO(output) ? writeAll(output, bytes, at: chunk.offset) : EINVAL
            }
            if failure != 0 { throw FileDigestError(path: copy, code: failure) }
        }
        defer { writer.cancel() }
        // Closed (waiting until it has hashed every chunk handed to it) before the writer is
        // cancelled and the memory goes.
        defer { lane?.close() }
        let hasher = SHA256Hasher()
        var size: Int64 = 0
        var ended = false
        var turn = 0
        var direct = true
        /// The chunk the lane is hashing, for the writer once it has.
        var inFlight: (ticket: CopyLane.Ticket, chunk: DirectChunk)?
        while !ended {
            let buffer = base + turn * capacity
            turn = (turn + 1) % buffers
            var filled = 0
            while filled < capacity {
                let count = try readSome(input, path, into: buffer + filled, count: capacity - filled)
                if count == 0 {
                    ended = true
                    break
                }
                filled += count
            }
            guard filled > 0 else { break }
            let padded = (filled + block - 1) / block * block
            if padded > filled { memset(buffer + filled, 0, padded - filled) }
            let chunk = DirectChunk(base: buffer, count: padded, offset: size)
            if let lane {
                let ticket = lane.hash(UnsafeRawBufferPointer(start: buffer, count: filled))
                if let previous = inFlight {
                    previous.ticket.wait()
                    try writer.send(previous.chunk)
                }
                inFlight = (ticket, chunk)
            } else {
                hasher.update(UnsafeRawBufferPointer(start: buffer, count: filled))
                try writer.send(chunk)
            }
            size += Int64(filled)
            if urgency?.isAbandoned == true { throw FileDigestError(path: copy, code: ECANCELED) }
            if direct, let urgency, urgency.isRaised, speed.isSlower(than: urgency.slowDisk) {
                // What waits for the copy is ready, and the disk is what the copy waits for: the
                // page cache takes the rest at once and the system writes it back afterwards.
                direct = !leaveDirectIO(output)
            }
        }
        if let last = inFlight {
            last.ticket.wait()
            try writer.send(last.chunk)
        }
        try writer.finish()
        var cut = ftruncate(output, off_t(size))
        while cut != 0 && errno == EINTR { cut = ftruncate(output, off_t(size)) }
        if cut != 0 { throw FileDigestError(path: copy, code: errno) }
        return try digest(of: lane, or: hasher, size: size, path: copy)
    }

    /// How fast `directCopy`'s direct writes have gone so far (bytes, and time spent writing
    /// them), measured on its writer thread.
    ///
    /// Why it matters: once the caller has nothing else to do, the rest of the copy could go
    /// through the page cache, at memory speed where the disk is slow; but new page-cache pages
    /// cost a host fault each on a virtual machine that gives memory back, slower than a fast
    /// disk's direct writes. So the page cache takes over only from a disk slower than `CopyUrgency.slowDisk`.
    package final class WriteSpeed: Sendable {
        private let measured = Mutex<(bytes: Int64, time: Duration)>((0, .zero))

        package init() {}

        package func add(bytes: Int, since start: ContinuousClock.Instant) {
            add(bytes: bytes, taking: ContinuousClock.now - start)
        }

        package func add(bytes: Int, taking time: Duration) {
            measured.withLock { $0 = ($0.bytes + Int64(bytes), $0.time + time) }
        }

        /// Whether the writes so far went slower than `bytesPerSecond`; false before the first.
        package func isSlower(than bytesPerSecond: Double) -> Bool {
            let (bytes, time) = measured.withLock { $0 }
            let seconds = time / .seconds(1)
            return bytes > 0 && seconds > 0 && Double(bytes) / seconds < bytesPerSecond
        }
    }

    /// A chunk of `directCopy`'s buffers on its way to the writer thread, which alone touches it
    /// until it has been written (see the rotation there).
    private struct DirectChunk: @unchecked Sendable {
        let base: UnsafeMutableRawPointer
        let count: Int
        let offset: Int64
    }

    /// Turns direct I/O off for what is still to be written to `fd`; whether it did.
    private static func leaveDirectIO(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFL)
        return flags >= 0 && fcntl(fd, F_SETFL, flags & ~galley_o_direct()) == 0
    }

    /// The digest of a file this process made and nobody else writes (the kept zip's staged
    /// copy), hashed through 2 MiB read-only mappings of its pages instead of `read`: the pages
    /// the copy left in the page cache are mapped, not copied (a tenth less CPU for the hash). Only for such a file: a mapping of a file another process truncates faults
    /// (SIGBUS) where a `read` would end early, so a user's zip is always read. Falls back to
    /// reading when the system refuses the mapping.
    /// `beside`: a hashing thread to hash it on, paired with its files (each window waits for it).
    static func mappedDigest(_ path: String, beside hashing: HashingThread? = nil) throws -> FileDigest {
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw FileDigestError(path: path, code: errno) }
        defer { close(input) }
        var status = stat()
        guard fstat(input, &status) == 0 else { throw FileDigestError(path: path, code: errno) }
        let size = Int64(status.st_size)
        let window: Int64 = 2 << 20
        let hasher = SHA256Hasher()
        let lane = hashing?.openCopyLane()
        defer { lane?.close() }
        var offset: Int64 = 0
        while offset < size {
            let length = Int(min(window, size - offset))
            let mapped = mmap(nil, length, PROT_READ, MAP_SHARED | MAP_POPULATE, input, off_t(offset))
            guard let mapped, mapped != MAP_FAILED else {
                // Refused (no memory for the mapping, a file system without it): read instead.
                return try of(path)
            }
            let bytes = UnsafeRawBufferPointer(start: mapped, count: length)
            if let lane { lane.hash(bytes).wait() } else { hasher.update(bytes) }
            munmap(mapped, length)
            offset += Int64(length)
        }
        return try digest(of: lane, or: hasher, size: size, path: path)
    }

    /// The digest of what went to `lane` when there is one (its thread cancelled: `ECANCELED`
    /// on `path`), else of what went to `hasher`.
    private static func digest(of lane: CopyLane?, or hasher: SHA256Hasher, size: Int64, path: String) throws -> FileDigest {
        guard let lane else { return FileDigest(sha256: hasher.finalizeHex(), size: size) }
        guard let digest = lane.digest() else { throw FileDigestError(path: path, code: ECANCELED) }
        return FileDigest(sha256: digest.hex, size: size)
    }

    /// Reads `path` to its end into `hasher` (1 MiB at a time) and returns the bytes read: for a
    /// hash that goes on past the file (a download resumed after what it already holds).
    public static func feed(_ path: String, into hasher: SHA256Hasher) throws -> Int64 {
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw FileDigestError(path: path, code: errno) }
        defer { close(input) }
        return try pump(input, path, into: hasher, copy: nil)
    }

    /// One `read(2)` of at most `count` bytes of `input` (named `path` in errors), retried when
    /// interrupted: the bytes read, 0 at the end. Both copies' loops read through it: the direct
    /// one fills its buffer, `pump` takes what comes.
    private static func readSome(_ input: Int32, _ path: String, into base: UnsafeMutableRawPointer, count: Int) throws -> Int {
        while true {
            let got = read(input, base, count)
            if got >= 0 { return got }
            if errno != EINTR { throw FileDigestError(path: path, code: errno) }
        }
    }

    /// The one read loop: `input` to its end, into `hasher`, and written to `copy` when given.
    private static func pump(
        _ input: Int32, _ path: String, into hasher: SHA256Hasher, copy: (fd: Int32, path: String)?, urgency: CopyUrgency? = nil
    ) throws -> Int64 {
        let capacity = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        guard let base = buffer.baseAddress else { throw FileDigestError(path: path, code: ENOMEM) }
        var size: Int64 = 0
        while true {
            let count = try readSome(input, path, into: base, count: capacity)
            if count == 0 { return size }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            hasher.update(chunk)
            size += Int64(count)
            if let copy {
                let failure = writeAll(copy.fd, chunk)
                if failure != 0 { throw FileDigestError(path: copy.path, code: failure) }
                if urgency?.isAbandoned == true { throw FileDigestError(path: copy.path, code: ECANCELED) }
            }
        }
    }
}

private enum KernelCopy { case copied, unsupported, failed(Int32) }

/// Copies all of `input` to `output` with copy_file_range(2), 64 MiB a call, so that an
/// abandoned copy (`urgency`) stops soon (`.failed(ECANCELED)`). `.unsupported` when the kernel
/// or the file systems cannot (nothing was written then).
private func kernelCopy(from input: Int32, to output: Int32, urgency: CopyUrgency?) -> KernelCopy {
    var copiedAny = false
    while true {
        if urgency?.isAbandoned == true { return .failed(ECANCELED) }
        let count = galley_copy_file_range(input, nil, output, nil, 64 << 20, 0)
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

/// Told by whoever waits for a copy (`FileDigest.of(_:copyingTo:urgency:)`) how things stand:
/// raised once it has nothing else to do (an import's pass, done, would otherwise wait for the
/// disk to take the rest of its kept zip), abandoned once the copy is of no use (the pass refused
/// the zip: the copy stops at its next chunk and throws). Safe to use from any thread.
public final class CopyUrgency: Sendable {
    private enum Stage: UInt8, AtomicRepresentable {
        case waiting, raised, abandoned
    }

    private let stage = Atomic<Stage>(.waiting)
    /// Bytes a second: once raised, a direct copy whose writes have gone slower than this hands
    /// the rest to the page cache (`FileDigest.WriteSpeed` says why not from a faster disk).
    let slowDisk: Double

    /// `slowDisk`: 400 MB/s unless told: below it, direct writes are what a copy waits for on
    /// any machine (a cloud volume's 125-250 MB/s); this project's machines' disks take 1-2 GB/s.
    public init(slowDisk: Double = 400e6) {
        self.slowDisk = slowDisk
    }

    /// The rest of the copy goes through the page cache, from a slow disk.
    public func raise() { _ = stage.compareExchange(expected: .waiting, desired: .raised, ordering: .relaxed) }

    /// The copy stops at its next chunk (`FileDigestError`, `ECANCELED`).
    public func abandon() { stage.store(.abandoned, ordering: .relaxed) }

    var isRaised: Bool { stage.load(ordering: .relaxed) != .waiting }
    var isAbandoned: Bool { stage.load(ordering: .relaxed) == .abandoned }
}

/// A read or write failure of `FileDigest`, with the path and the system's words for it.
public struct FileDigestError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var code: Int32
    public var description: String { "\(path): \(String(cString: strerror(code)))" }
}

/// Copies `count` bytes at `from` in `input` to `to` in `output` with copy_file_range(2) (the
/// kernel copies, or shares the blocks on a file system that can), else with pread and pwrite
/// where the kernel or the file systems cannot; 0, or the errno of the failure.
package func copyRange(_ input: Int32, from: UInt64, _ output: Int32, to: UInt64, count: UInt64) -> Int32 {
    var source = Int64(from)
    var target = Int64(to)
    var left = count
    while left > 0 {
        let copied = galley_copy_file_range(input, &source, output, &target, Int(min(left, 64 << 20)), 0)
        if copied > 0 {
            left -= UInt64(copied)
            continue
        }
        if copied < 0, errno == EINTR { continue }
        if copied == 0 { return EIO }  // the input ended early
        guard [ENOSYS, EXDEV, EINVAL, EOPNOTSUPP, EBADF].contains(errno) else { return errno }
        while left > 0 {
            guard let bytes = try? readAll(input, at: UInt64(source), count: Int(min(left, 1 << 20))), !bytes.isEmpty else { return EIO }
            let failure = bytes.withUnsafeBytes { writeAll(output, $0, at: target) }
            if failure != 0 { return failure }
            source += Int64(bytes.count)
            target += Int64(bytes.count)
            left -= UInt64(bytes.count)
        }
    }
    return 0
}
