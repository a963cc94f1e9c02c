import Foundation
internal import CArchive
import GalleyCore

/// How one zip entry is compressed.
public enum ZipCompression: String, Sendable {
    case store, deflate
}

/// Writes a zip file with libarchive, streaming: each file is copied in 1 MiB chunks, so no
/// file or archive is ever held in memory. The only file in Galley that touches CArchive's
/// writer.
///
/// Reproducible by construction: entries carry only the given mtime, mode 0644 and uid/gid 0;
/// no block padding; libarchive's DOS time is computed in UTC (see `ProcessEnvironment`).
///
/// Not thread-safe, but it may move between threads: one thread at a time uses it (`stream`
/// hands it to a thread of its own, which deflates pack's latest.json while the articles are
/// built, until the stream is finished).
public final class ZipWriter: @unchecked Sendable {
    private let archive: OpaquePointer
    private let sink: Sink
    private var closed = false
    /// zlib's level for deflated entries (pack deflates only latest.json). 5, not zlib's default
    /// 6: level 6 searches four times longer chains for a match, for little on prose and HTML.
    /// On real Markdown and HTML level 5 is a third quicker for 2% more bytes; on a large
    /// latest.json of few distinct words (the 30,000-article bench issue) nearly three times
    /// quicker for 13% more. Level 4 would give 6% more bytes.
    static let deflateLevel = 5
    /// The zip's path, and whether Zip64 records may be written (for `stream`).
    let url: URL
    let allowZip64: Bool
    /// The entry begun last, for the messages of `write` and `finishEntry`.
    private var entryName = ""
    /// For an entry begun of unknown size without Zip64: its bytes so far, and the most it may
    /// hold (libarchive learns the size only at the entry's end).
    private var entryBytes: Int64 = 0
    private var entryLimit: Int64?
    /// For `addFile`, made at its first call: pack opens its zip before building the articles
    /// (latest.json streams into it), where a megabyte more would count at pack's peak. A stored
    /// property, not `lazy`: a lazy array is copied whole at every mutating access (1 MiB per
    /// chunk read, which made packing 30,000 articles 3 s slower).
    private var buffer: [UInt8] = []

    final class Sink {
        package let fd: Int32
        package let hasher: SHA256Hasher?
        package var bytes: Int64 = 0
        package var failure: String?

        package init(fd: Int32, hashing: Bool) {
            self.fd = fd
            self.hasher = hashing ? SHA256Hasher() : nil
        }
    }

    /// Creates the file at `url` (which must not exist) and opens a zip on it.
    /// - Parameters:
    ///   - hashing: compute the SHA-256 of the bytes written.
    ///   - allowZip64: let libarchive use Zip64 records when sizes need them; otherwise it never does.
    public init(url: URL, hashing: Bool, allowZip64: Bool) throws {
        try ProcessEnvironment.requireArchiveSettings()
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw GalleyError("cannot create the output file: \(String(cString: strerror(errno)))", id: .outputUnwritable, path: url.path,
                              hint: "Check that the folder exists and is writable.")
        }
        guard let archive = archive_write_new() else {
            close(fd)
            throw GalleyError("libarchive could not allocate a writer")
        }
        self.archive = archive
        self.sink = Sink(fd: fd, hashing: hashing)
        self.url = url
        self.allowZip64 = allowZip64
        var options = "zip:hdrcharset=UTF-8,zip:compression-level=\(Self.deflateLevel)"
        if !allowZip64 { options += ",zip:!zip64" }
        guard archive_write_set_format_zip(archive) == ARCHIVE_OK,
              archive_write_set_bytes_per_block(archive, 64 * 1024) == ARCHIVE_OK,
              archive_write_set_bytes_in_last_block(archive, 1) == ARCHIVE_OK,
              archive_write_set_options(archive, options) == ARCHIVE_OK
        else {
            let message = libarchiveError(archive)
            archive_write_free(archive)
            close(fd)
            throw GalleyError("libarchive refused the zip settings: \(message)")
        }
        let context = Unmanaged.passUnretained(sink).toOpaque()
        let status = archive_write_open2(archive, context, nil, { _, client, data, length in
            guard let client, let data else { return -1 }
            let sink = Unmanaged<ZipWriter.Sink>.fromOpaque(client).takeUnretainedValue()
            let failure = writeAll(sink.fd, UnsafeRawBufferPointer(start: data, count: length))
            if failure != 0 {
                sink.failure = String(cString: strerror(failure))
                return -1
            }
            sink.hasher?.update(UnsafeRawBufferPointer(start: data, count: length))
            sink.bytes += Int64(length)
            return length
        }, nil, nil)
        guard status == ARCHIVE_OK else {
            let message = libarchiveError(archive)
            archive_write_free(archive)
            close(fd)
            throw GalleyError("cannot start the zip: \(message)", id: .outputUnwritable, path: url.path)
        }
    }

    deinit {
        if !closed {
            archive_write_free(archive)
            close(sink.fd)
        }
    }

    /// Bytes written to the file so far.
    public var bytesWritten: Int64 { sink.bytes }

    /// Adds the file at `source` as `name`, reading it in chunks. Fails if the file does not
    /// have exactly `size` bytes (it changed while packing).
    public func addFile(
        name: String, from source: String, size: Int64, mtime: Int64, compression: ZipCompression,
        progress: (Int64) -> Void = { _ in }
    ) throws {
        // O_NONBLOCK: a FIFO put where a planned file was reads as empty (and is reported as a
        // changed file) instead of waiting for a writer.
        let input = open(source, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard input >= 0 else {
            throw GalleyError("cannot open: \(String(cString: strerror(errno)))", id: .inputUnreadable, path: source)
        }
        defer { close(input) }
        try writeHeader(name: name, size: size, mtime: mtime, compression: compression)
        if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: 1 << 20) }
        var total: Int64 = 0
        let capacity = buffer.count
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, capacity) }
            if count < 0 {
                if errno == EINTR { continue }
                throw GalleyError("cannot read: \(String(cString: strerror(errno)))", id: .inputUnreadable, path: source)
            }
            if count == 0 { break }
            total += Int64(count)
            guard total <= size else { break }
            try buffer.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
            progress(Int64(count))
        }
        guard total == size else {
            throw GalleyError("the file changed while it was being packed (expected \(size) bytes, found \(total))", id: .inputUnreadable,
                              path: source, hint: "Pack again once nothing is writing to the issue folder.")
        }
        try finishEntry()
    }

    /// Starts an entry whose size is not known yet, for `write(_:)` and `finishEntry()`. Its
    /// local header carries no sizes (they follow the data, in the data descriptor every entry
    /// has, and in the central directory), as the zip format has it for such entries; readers
    /// take the sizes from the directory (minizip, Dumpling's, compares a local header's CRC
    /// and sizes with it only when flag bit 3 is clear, and libarchive sets it on every
    /// entry). Without `allowZip64` it is written without Zip64 records (and fails past 4 GiB);
    /// with it, libarchive gives the entry Zip64 records, as it must for a size it cannot know
    /// (`stream` spools such an entry instead, so that it gets them only when it needs them).
    ///
    /// Without Zip64 the entry holds at most `maxBytes` (4 GiB less a byte, what its sizes' 32
    /// bits can say): a `write` past it throws `ZipEntryNeedsZip64` and writes nothing more.
    public func beginEntry(name: String, mtime: Int64, compression: ZipCompression, maxBytes: Int64 = ZipLimits.classic.maxBytes) throws {
        try writeHeader(name: name, size: nil, mtime: mtime, compression: compression)
        entryLimit = allowZip64 ? nil : maxBytes
    }

    /// Appends `bytes` to the entry begun last.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        if let entryLimit {
            entryBytes += Int64(bytes.count)
            if entryBytes > entryLimit { throw ZipEntryNeedsZip64(name: entryName, maxBytes: entryLimit) }
        }
        let written = archive_write_data(archive, bytes.baseAddress, bytes.count)
        guard written == bytes.count else { throw failure("cannot write `\(entryName)`") }
    }

    /// Ends the entry begun last.
    public func finishEntry() throws {
        guard archive_write_finish_entry(archive) == ARCHIVE_OK else { throw failure("cannot finish `\(entryName)`") }
    }

    /// Adds `data` as `name`.
    public func addData(name: String, _ data: [UInt8], mtime: Int64, compression: ZipCompression) throws {
        try writeHeader(name: name, size: Int64(data.count), mtime: mtime, compression: compression)
        try data.withUnsafeBytes { try write($0) }
        try finishEntry()
    }

    private func writeHeader(name: String, size: Int64?, mtime: Int64, compression: ZipCompression) throws {
        (entryName, entryBytes, entryLimit) = (name, 0, nil)
        let status = compression == .store
            ? archive_write_zip_set_compression_store(archive)
            : archive_write_zip_set_compression_deflate(archive)
        guard status == ARCHIVE_OK else { throw failure("cannot set the compression of `\(name)`") }
        guard let entry = archive_entry_new() else { throw GalleyError("libarchive could not allocate an entry") }
        defer { archive_entry_free(entry) }
        archive_entry_set_pathname_utf8(entry, name)
        archive_entry_set_filetype(entry, galley_AE_IFREG)
        archive_entry_set_perm(entry, 0o644)
        if let size { archive_entry_set_size(entry, size) }
        archive_entry_set_mtime(entry, time_t(mtime), 0)
        archive_entry_set_uid(entry, 0)
        archive_entry_set_gid(entry, 0)
        guard archive_write_header(archive, entry) == ARCHIVE_OK else { throw failure("cannot add `\(name)`") }
    }

    /// Writes the central directory and closes the file (after `fsync`).
    /// - Returns: the size of the zip and, when hashing, its SHA-256.
    public func finish() throws -> (bytes: Int64, sha256: String?) {
        let (bytes, sha256) = try end()
        let synced = fsync(sink.fd) == 0 ? 0 : errno
        close(sink.fd)
        try ZipSync.check(synced)
        return (bytes, sha256)
    }

    /// `finish()`, with the flush to disk begun on a worker thread instead of waited for: the
    /// caller reads the zip back meanwhile (pack's container checks on what it wrote) and
    /// waits for `synced` before moving the zip into place. The fsync of a 30,000-article
    /// issue's 650 MB took 0.19 s that the read-back can have.
    public func finishSyncingInBackground() throws -> (bytes: Int64, sha256: String?, synced: ZipSync) {
        let (bytes, sha256) = try end()
        return (bytes, sha256, ZipSync(fd: sink.fd))
    }

    /// Ends the zip (libarchive writes the central directory); the file stays open, to be
    /// flushed, unless ending failed.
    private func end() throws -> (bytes: Int64, sha256: String?) {
        guard !closed else { throw GalleyError("the zip is already closed") }
        closed = true
        let status = archive_write_close(archive)
        let message = libarchiveError(archive)
        archive_write_free(archive)
        guard status == ARCHIVE_OK else {
            close(sink.fd)
            throw GalleyError("cannot finish the zip: \(sink.failure ?? message)", id: .outputUnwritable)
        }
        return (sink.bytes, sink.hasher?.finalizeHex())
    }

    private func failure(_ what: String) -> GalleyError {
        GalleyError("\(what): \(sink.failure ?? libarchiveError(archive))", id: .outputUnwritable,
                    hint: sink.failure != nil ? "Check the free space on the output's disk." : nil)
    }

}


/// A finished zip's flush to disk (fsync, then close) on a worker thread. `wait()` before the
/// zip is relied on, and on every path before its folder goes away.
public final class ZipSync: Sendable {
    private let flush: BackgroundMap<Int32>

    init(fd: Int32) {
        flush = BackgroundMap([fd]) { fd in
            let failure = fsync(fd) == 0 ? 0 : errno
            close(fd)
            return failure
        }
    }

    /// Waits for the flush; throws if it failed.
    public func wait() throws {
        try Self.check(flush.results().first ?? 0)
    }

    static func check(_ failure: Int32) throws {
        guard failure == 0 else {
            throw GalleyError("cannot flush the zip to disk: \(String(cString: strerror(failure)))", id: .outputUnwritable)
        }
    }
}

extension ZipWriter {
    /// An entry whose bytes a thread of its own writes (deflating them) as the caller hands
    /// them to the stream, while it makes the next ones. The writer belongs to that thread until
    /// the stream's `finish()` or `cancel()` returns.
    ///
    /// Without Zip64 the entry is begun at once, of unknown size (`beginEntry`). With Zip64
    /// allowed, the thread spools the bytes to a file beside the zip and `finish()` adds it with
    /// its size known: begun of unknown size, libarchive would give the entry Zip64 records
    /// whether it needs them or not.
    ///
    /// Without Zip64 the entry holds at most `maxBytes` (see `beginEntry`): past it the stream
    /// fails with `ZipEntryNeedsZip64`.
    public func stream(
        name: String, mtime: Int64, compression: ZipCompression, maxBytes: Int64 = ZipLimits.classic.maxBytes
    ) throws -> ZipEntryStream {
        try ZipEntryStream(writer: self, entry: (name, mtime, compression), maxBytes: maxBytes)
    }
}

/// An entry of unknown size grew past what a zip without Zip64 can record (see
/// `ZipWriter.beginEntry`).
public struct ZipEntryNeedsZip64: Error, Sendable {
    /// The entry's name in the zip.
    public var name: String
    /// The most it could hold.
    public var maxBytes: Int64
}

/// An entry being written by another thread; see `ZipWriter.stream`.
public final class ZipEntryStream {
    private let writer: ZipWriter
    private let entry: (name: String, mtime: Int64, compression: ZipCompression)
    private let spool: Spool?
    private let consumer: BackgroundConsumer<[UInt8]>

    /// The file a Zip64-allowed stream goes to first; the consumer's thread writes it.
    private final class Spool: @unchecked Sendable {
        let path: String
        var fd: Int32
        var bytes: Int64 = 0

        init(path: String) throws {
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw GalleyError("cannot create a temporary file: \(String(cString: strerror(errno)))", id: .outputUnwritable,
                                  path: path, hint: "Check that the output folder is writable.")
            }
            self.path = path
        }

        func write(_ chunk: [UInt8]) throws {
            let failure = chunk.withUnsafeBytes { writeAll(fd, $0) }
            guard failure == 0 else {
                throw GalleyError("cannot write a temporary file: \(String(cString: strerror(failure)))", id: .outputUnwritable,
                                  path: path, hint: "Check the free space on the output's disk.")
            }
            bytes += Int64(chunk.count)
        }

        /// Closes and removes the file (once).
        func remove() {
            guard fd >= 0 else { return }
            close(fd)
            fd = -1
            unlink(path)
        }
    }

    fileprivate init(writer: ZipWriter, entry: (name: String, mtime: Int64, compression: ZipCompression), maxBytes: Int64) throws {
        self.writer = writer
        self.entry = entry
        let spool = writer.allowZip64 ? try Spool(path: writer.url.path + ".stream") : nil
        if spool == nil {
            try writer.beginEntry(name: entry.name, mtime: entry.mtime, compression: entry.compression, maxBytes: maxBytes)
        }
        self.spool = spool
        // Two chunks queued: the thread is never idle for want of one, and memory stays small.
        consumer = BackgroundConsumer(capacity: 2) { chunk in
            if let spool {
                try spool.write(chunk)
            } else {
                try chunk.withUnsafeBytes { try writer.write($0) }
            }
        }
    }

    deinit { cancel() }

    /// Queues `chunk` (waits while two are queued); throws the thread's failure, if any.
    public func send(_ chunk: [UInt8]) throws { try consumer.send(chunk) }

    /// Waits for every chunk to be written and ends the entry.
    public func finish() throws {
        try consumer.finish()
        guard let spool else { return try writer.finishEntry() }
        defer { spool.remove() }
        try writer.addFile(name: entry.name, from: spool.path, size: spool.bytes, mtime: entry.mtime, compression: entry.compression)
    }

    /// Stops the thread without ending the entry (the zip is to be thrown away). After
    /// `finish()`, does nothing.
    public func cancel() {
        consumer.cancel()
        spool?.remove()
    }
}

/// The message of libarchive's last error on `archive`.
func libarchiveError(_ archive: OpaquePointer) -> String {
    (archive_error_string(archive).map { String(cString: $0) } ?? "unknown libarchive error")
        .trimmingCharacters(in: .whitespacesAndNewlines)
}
