import CompressNIO
import Foundation
import GalleyCore
import Hummingbird
import NIOCore
import NIOPosix

/// Where an answer whose size the request does not bound (`/issues/{id}`, `/assets`) is written
/// as the store reads its rows: in memory while it is small enough for the answer cache to keep,
/// past that in a temporary file that is already unlinked (nothing is left behind whatever
/// happens, and nobody else can open it). The 30,000-article issue's `/issues/{id}` is a 103 MB
/// answer: held whole (and gzipped whole beside it) it took the server to 145 MB for a plain
/// request and 290 MB for a gzipped one, per request in flight.
///
/// Why a file and not the rows streamed to the client as they are read: the rows come from one
/// read transaction, and a slow client would hold it open for as long as it takes to read the
/// answer, keeping every later import's pages in the write-ahead log until it let go. Written
/// to a file, the transaction ends as soon as the rows are read, whatever the client does.
final class AnswerSpool {
    /// What was written: the bytes, or the file they went to.
    enum Content: Sendable {
        case memory(ByteBuffer)
        case file(SpoolFile)
    }

    private let memoryLimit: Int
    /// Where the file goes (the temporary folder, `TMPDIR`, unless told).
    private let folder: String
    private var buffer = ByteBuffer()
    private var descriptor: CInt?
    private var size: Int64 = 0
    /// The first write that failed (a full disk): every later write is dropped, `finish` throws it.
    private(set) var failure: GalleyError?

    /// A spool that keeps at most `memoryLimit` bytes in memory (0: straight to a file), then
    /// writes to a file in `folder` (nil: the temporary folder, `TMPDIR` or /tmp).
    init(memoryLimit: Int, folder: String? = nil) {
        self.memoryLimit = memoryLimit
        self.folder = folder ?? FileManager.default.temporaryDirectory.path
    }

    deinit {
        if let descriptor { close(descriptor) }
    }

    func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    func write(_ bytes: ByteBuffer) {
        bytes.withUnsafeReadableBytes { write($0) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, !bytes.isEmpty else { return }
        if descriptor == nil, buffer.readableBytes + bytes.count <= memoryLimit {
            buffer.writeBytes(bytes)
            return
        }
        do {
            let descriptor = try self.descriptor ?? openFile()
            if buffer.readableBytes > 0 {
                try buffer.withUnsafeReadableBytes { try Self.writeAll(descriptor, $0) }
                size += Int64(buffer.readableBytes)
                buffer = ByteBuffer()
            }
            try Self.writeAll(descriptor, bytes)
            size += Int64(bytes.count)
        } catch let error as GalleyError {
            failure = error
        } catch {
            failure = GalleyError("cannot write the answer: \(error)", id: .storeFailed)
        }
    }

    /// What was written; throws the first failure.
    func finish() throws -> Content {
        if let failure { throw failure }
        guard let descriptor else { return .memory(buffer) }
        self.descriptor = nil
        return .file(SpoolFile(descriptor: descriptor, size: size))
    }

    /// A new file in `folder`, unlinked at once.
    private func openFile() throws -> CInt {
        var template = Array("\(folder)/galley-answer-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            // No path: the error goes to the client, and the server's folders are not its business.
            throw GalleyError("cannot make a temporary file for a large answer: \(String(cString: strerror(errno)))", id: .storeFailed,
                              hint: "Check that the server's TMPDIR (or /tmp) exists and is writable.")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        self.descriptor = descriptor
        return descriptor
    }

    private static func writeAll(_ descriptor: CInt, _ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let written = Foundation.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if written < 0 {
                if errno == EINTR { continue }
                throw GalleyError("cannot write a large answer to its temporary file: \(String(cString: strerror(errno)))", id: .storeFailed,
                                  hint: "Check the free space of the server's TMPDIR (or /tmp).")
            }
            done += written
        }
    }

    /// `file`'s bytes gzipped into a file of their own, a chunk at a time.
    static func gzipped(_ file: SpoolFile, folder: String? = nil) throws -> SpoolFile {
        let out = AnswerSpool(memoryLimit: 0, folder: folder)
        let compressor = try ZlibCompressor(algorithm: .gzip)
        var window = ByteBuffer()
        window.reserveCapacity(64 * 1024)
        var offset: Int64 = 0
        repeat {
            var chunk = try file.read(at: offset, count: Int(GalleyServer.chunkLength))
            offset += Int64(chunk.readableBytes)
            try chunk.compressStream(with: compressor, window: &window, flush: offset >= file.size ? .finish : .no) { out.write($0) }
        } while offset < file.size
        guard case .file(let gzipped) = try out.finish() else {
            throw GalleyError("cannot gzip a large answer", id: .storeFailed)
        }
        return gzipped
    }
}

/// An answer's bytes in an unlinked temporary file, closed when the last reference goes (the
/// answer sent, or the connection gone before it was).
final class SpoolFile: Sendable {
    let descriptor: CInt
    let size: Int64

    fileprivate init(descriptor: CInt, size: Int64) {
        self.descriptor = descriptor
        self.size = size
    }

    deinit { close(descriptor) }

    /// At most `count` bytes from `offset`; fewer only at the end.
    func read(at offset: Int64, count: Int) throws -> ByteBuffer {
        var buffer = ByteBuffer()
        let wanted = Int(min(Int64(count), max(size - offset, 0)))
        var filled = 0
        try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: max(wanted, 1)) { raw in
            while filled < wanted {
                let got = pread(descriptor, raw.baseAddress! + filled, wanted - filled, off_t(offset) + off_t(filled))
                if got < 0 {
                    if errno == EINTR { continue }
                    throw GalleyError("cannot read a large answer back from its temporary file: \(String(cString: strerror(errno)))",
                                      id: .storeFailed)
                }
                if got == 0 { break }
                filled += got
            }
            return filled
        }
        return buffer
    }

    /// The file as a response body, read a chunk at a time on NIO's thread pool and sent as
    /// downloads are (`GalleyServer.writeChunks`).
    func body(on channel: any Channel, limits: SendLimits) -> ResponseBody {
        ResponseBody(contentLength: Int(size)) { writer in
            if self.size > 0 {
                try await GalleyServer.writeChunks(0...(self.size - 1), of: nil, to: &writer, on: channel, limits: limits) { offset, length in
                    try await NIOThreadPool.singleton.runIfActive { try self.read(at: offset, count: Int(length)) }
                }
            }
            try await writer.finish(nil)
        }
    }
}
