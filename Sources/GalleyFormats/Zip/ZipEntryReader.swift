import Foundation
internal import CZlib
internal import CDeflate
import GalleyCore

/// Reads the entries of a zip whose central directory Galley read (`ZipDirectory`), in file
/// order, each from the offset that directory found: stored entries as they are, deflated ones
/// through zlib; every entry's CRC-32 is checked against the directory's as its data ends. The
/// only file in Galley that touches zlib or libdeflate.
///
/// Written here rather than taken from libarchive, which Galley uses for the other zip work:
/// libarchive's seekable zip reader reads the central directory again into a tree of its own
/// (8.6 MB of a 60,000-entry validate, beside Galley's own copy) and every local header again,
/// and its streaming reader follows local headers instead of the directory, so it would read
/// entries the directory does not list (the hiding places `zip.unaccounted` refuses). This
/// reader reads exactly the bytes the container checks accounted for, each once, through one
/// window that moves forward through the file. zlib does the inflating and the CRC; what is
/// written by hand is only where each entry's bytes are. The CRC-32 is libdeflate's
/// (`libdeflate_crc32`, the same polynomial and convention as zlib's `crc32`): zlib 1.2.13 has no
/// carry-less-multiply CRC, and at 3.7 GB/s against libdeflate's 14 its CRC was 9% of an
/// import's CPU, on the thread every other step of the pass waits for.
public final class ZipEntryReader {
    /// Damage in an entry's data: a CRC that does not match, a deflate stream that is damaged,
    /// cut short or ends early, a file that ends inside the data.
    public struct ReadError: Error, Sendable {
        public enum Kind: Sendable { case checksum, damaged }
        public var kind: Kind
        public var message: String
        public var isChecksum: Bool { kind == .checksum }

        init(_ kind: Kind = .damaged, message: String) {
            self.kind = kind
            self.message = message
        }
    }

    public struct Entry: Sendable {
        /// Its place in `ZipDirectory.entries`.
        public var number: Int
        /// Its full name (as `ZipDirectory.Entry.displayName`).
        public var name: String
        public var isDirectory: Bool
    }

    private let fd: Int32
    private let entries: [ZipDirectory.Entry]
    /// Entry numbers by local header offset: the order of the bytes in the file.
    private let order: [Int32]
    private var nextInOrder = 0

    /// Bytes of the file from `windowStart`, read ahead so that small entries next to each
    /// other cost one `pread` between them, not one each.
    private let window: UnsafeMutableRawBufferPointer
    private var windowStart: UInt64 = 0
    private var windowCount = 0
    /// What the current entry gave last. 64 KiB, as libarchive hands out: an import's hashing
    /// thread queues up to nine chunks, so bigger chunks are megabytes more of memory.
    private var output = [UInt8](repeating: 0, count: 64 * 1024)
    /// More buffers for `output` to take turns with (`keepsChunks`).
    private var turns: [[UInt8]] = []
    private var turn = 0
    /// zlib's state keeps a pointer back to its stream, so the stream must not move: it lives
    /// in memory of its own, not in a Swift property.
    private let stream: UnsafeMutablePointer<z_stream>
    private var current: Current?

    /// The entry being read.
    private struct Current {
        var entry: ZipDirectory.Entry
        /// The file offset of the next compressed byte not yet handed to zlib (or copied).
        var position: UInt64
        /// Compressed bytes not yet handed to zlib (or copied).
        var remaining: UInt64
        var crc: UInt32
        /// The deflate stream ended (or the stored bytes did).
        var ended = false
        /// The error this entry's data gives, before any byte is read.
        var refusal: String?
    }

    public init(path: String, directory: ZipDirectory) throws {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw GalleyError("cannot open the zip: \(String(cString: strerror(errno)))", id: .inputUnreadable, path: path)
        }
        let entries = directory.entries
        self.entries = entries
        var order = (0..<Int32(entries.count)).map { $0 }
        if !entries.indices.dropFirst().allSatisfy({ entries[$0 - 1].localHeaderOffset <= entries[$0].localHeaderOffset }) {
            order.sort { entries[Int($0)].localHeaderOffset < entries[Int($1)].localHeaderOffset }
        }
        self.order = order
        window = .allocate(byteCount: 256 * 1024, alignment: 16)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = galley_inflate_init_raw(stream)
        guard status == Z_OK else {
            close(fd)
            window.deallocate()
            stream.deallocate()
            throw GalleyError("zlib could not start an inflater (\(status))", path: path)
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        window.deallocate()
        close(fd)
    }

    /// How many chunks a consumer may keep (an import's hashing thread queues those it has
    /// not hashed yet) without the reader copying them: the chunks come from a ring of one
    /// buffer more than that, so the buffer each chunk is written into was let go by the
    /// consumer long before. (Array storage is copied on write, so a chunk still kept is never
    /// written over: it would be copied first, which is what the consumer did itself before,
    /// 11% of an import's inflating thread at 3,000 articles.) 0 by default: one buffer.
    public var keepsChunks = 0 {
        didSet {
            // Not zeroed: a page of a buffer is touched only once a chunk reaches it (the ring
            // of a 30,000-article import of 10 KiB files would otherwise be 1.2 MB more resident,
            // for chunks a sixth of a buffer). Only the bytes a chunk wrote are ever handed out.
            let size = output.count
            turns = (0..<max(0, keepsChunks)).map { _ in [UInt8](unsafeUninitializedCapacity: size) { _, count in count = size } }
        }
    }

    /// The next entry in file order, or `nil` at the end. An entry not read to its end is left
    /// unchecked.
    public func next() -> Entry? {
        guard nextInOrder < order.count else {
            current = nil
            return nil
        }
        let number = Int(order[nextInOrder])
        nextInOrder += 1
        let entry = entries[number]
        var refusal: String?
        if entry.isEncrypted {
            refusal = "the entry is encrypted"
        } else if entry.method != 0 && entry.method != 8 {
            refusal = "unsupported compression method \(entry.method)"
        } else if entry.localHeaderLength == nil {
            refusal = "the entry has no valid local header"
        }
        let start = ZipDirectory.sum(entry.localHeaderOffset, entry.localHeaderLength ?? 0)
        current = Current(entry: entry, position: start, remaining: entry.compressedSize, crc: 0, refusal: refusal)
        // What zlib had not taken of an entry left before its end (read up to a limit, or
        // skipped) is not this entry's input.
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        if entry.method == 8 { inflateReset(stream) }
        return Entry(number: number, name: entry.displayName, isDirectory: entry.isDirectory)
    }

    /// Reads the current entry's content, handing each chunk to `body`, and stops (returning
    /// `false`) once more than `limit` bytes came out; `body` never gets more than `limit` bytes.
    /// Returns `true` when the entry ended within the limit. Throws when the data is damaged or
    /// its CRC does not match.
    public func read(limit: Int64, _ body: (ArraySlice<UInt8>) -> Void) throws(ReadError) -> (bytes: Int64, complete: Bool) {
        var total: Int64 = 0
        while true {
            let count = try produce()
            if count == 0 { return (total, true) }
            let allowed = Int(min(Int64(count), max(limit - total, 0)))
            total += Int64(count)
            if allowed > 0 { body(output[0..<allowed]) }
            if total > limit {
                current = nil
                return (total, false)
            }
        }
    }

    /// The next chunk of the current entry's content, or `nil` at its end.
    public func readChunk() throws(ReadError) -> [UInt8]? {
        let count = try produce()
        return count == 0 ? nil : Array(output[0..<count])
    }

    /// Leaves the current entry without reading it.
    public func skip() {
        current = nil
    }

    /// Puts the current entry's next bytes in `output`; 0 at its end, once its CRC matched.
    private func produce() throws(ReadError) -> Int {
        guard var state = current else { return 0 }
        if !turns.isEmpty {
            swap(&output, &turns[turn])
            turn = (turn + 1) % turns.count
        }
        if let refusal = state.refusal {
            current = nil
            throw ReadError(message: refusal)
        }
        let count: Int
        do {
            count = try fill(&state)
        } catch {
            current = nil
            throw error
        }
        if count > 0 {
            // Bytes first; damage found after them is thrown by the next call.
            current = state
            return count
        }
        current = nil
        if let refusal = state.refusal { throw ReadError(message: refusal) }
        let crc = state.crc
        guard crc == state.entry.crc32 else {
            throw ReadError(.checksum, message: "CRC-32 mismatch: the data's is \(hexString(crc.bigEndianBytes)), the directory declares \(hexString(state.entry.crc32.bigEndianBytes))")
        }
        return 0
    }

    /// The next bytes of `state`'s entry into `output`: 0 when it ended or is damaged (`refusal`).
    private func fill(_ state: inout Current) throws(ReadError) -> Int {
        let capacity = output.count
        if state.entry.method == 0 {
            let wanted = Int(min(state.remaining, UInt64(capacity)))
            var copied = 0
            while copied < wanted {
                let available = try bytes(at: state.position)
                let count = min(available.count, wanted - copied)
                output.withUnsafeMutableBytes { out in
                    if let to = out.baseAddress, let from = available.baseAddress { (to + copied).copyMemory(from: from, byteCount: count) }
                }
                copied += count
                state.position += UInt64(count)
                state.remaining -= UInt64(count)
            }
            state.crc = output.withUnsafeBytes { libdeflate_crc32(state.crc, $0.baseAddress, copied) }
            return copied
        }
        while !state.ended {
            if stream.pointee.avail_in == 0, state.remaining > 0 {
                let available = try bytes(at: state.position)
                let count = Int(min(UInt64(available.count), state.remaining))
                stream.pointee.next_in = UnsafeMutablePointer(mutating: available.baseAddress?.assumingMemoryBound(to: Bytef.self))
                stream.pointee.avail_in = uInt(count)
                state.position += UInt64(count)
                state.remaining -= UInt64(count)
            }
            let status = output.withUnsafeMutableBytes { out -> Int32 in
                stream.pointee.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(capacity)
                return inflate(stream, Z_NO_FLUSH)
            }
            let produced = capacity - Int(stream.pointee.avail_out)
            switch status {
            case Z_STREAM_END:
                state.ended = true
                let left = UInt64(stream.pointee.avail_in) + state.remaining
                if left > 0 {
                    state.refusal = "the deflate stream ends \(left) bytes before the entry's compressed data does"
                }
            case Z_OK:
                break
            case Z_BUF_ERROR where stream.pointee.avail_in == 0 && state.remaining == 0:
                state.refusal = "the compressed data ends inside its deflate stream (truncated)"
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                state.refusal = "the deflate data is damaged: \(reason)"
            }
            if produced > 0 {
                state.crc = output.withUnsafeBytes { libdeflate_crc32(state.crc, $0.baseAddress, produced) }
                return produced
            }
            if state.refusal != nil { return 0 }
        }
        return 0
    }

    /// The window's bytes from `offset` on (at least one), reading the file there first when
    /// the window does not hold it. Throws when the file ends before `offset`.
    private func bytes(at offset: UInt64) throws(ReadError) -> UnsafeRawBufferPointer {
        if offset < windowStart || offset >= windowStart + UInt64(windowCount) {
            var got = -1
            repeat {
                got = pread(fd, window.baseAddress, window.count, off_t(clamping: offset))
            } while got < 0 && errno == EINTR
            guard got > 0 else {
                throw ReadError(message: got < 0 ? "cannot read the zip: \(String(cString: strerror(errno)))" : "the zip ends inside an entry's data (truncated)")
            }
            windowStart = offset
            windowCount = got
        }
        let skip = Int(offset - windowStart)
        return UnsafeRawBufferPointer(rebasing: window[skip..<windowCount])
    }
}
