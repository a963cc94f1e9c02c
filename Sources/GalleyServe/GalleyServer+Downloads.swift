import Foundation
import GalleyCore
import GalleyFormats
import GalleyStore
import HTTPTypes
import Hummingbird
import NIOCore
import _NIOFileSystem

extension GalleyServer {
    /// `GET`/`HEAD /issues/{id}/files/{name}`: one file of an issue. Only names the store
    /// recorded for that issue are served: nothing else of the disk is reachable.
    func download(_ request: Request, _ context: ServeContext) async throws -> Response {
        do {
            let id = try context.parameters.require("id")
            let name = try context.parameters.require("name")
            guard Self.isPlainName(name) else {
                throw GalleyError("no file `\(name)` in issue `\(id)`", id: .notFound)
            }
            let file = try await storeCall { try self.store.localFile(try self.store.file(name, issue: id)) }
            return try await send(file, request, context) {
                (try? MediaProber.probe(path: file.path))??.format.mimeType
                    ?? (name.lowercased().hasSuffix(".json") ? Self.json : "application/octet-stream")
            }
        } catch {
            return failure(error, version: nil)
        }
    }

    /// `GET`/`HEAD /packages/{id}/{sha256}.zip`: an issue's kept zip, at an address named by
    /// its content (so it is cached for good); an address of a replaced zip is a 404 whose
    /// hint points at the feed.
    func packageDownload(_ request: Request, _ context: ServeContext) async throws -> Response {
        do {
            let id = try context.parameters.require("id")
            let name = try context.parameters.require("file")
            let package = try await storeCall { try self.store.package(id) }
            guard package.withheld == nil else { throw Self.withheld(package) }
            guard name == package.file.name else {
                throw GalleyError("issue `\(package.appleID)` has no package `\(name)`", id: .notFound,
                                  hint: "GET /packages/\(package.appleID) names its current one.")
            }
            let file = try await storeCall { try self.store.localFile(package.file) }
            return try await send(file, request, context, disposition: "\(SourceTree.zipSafeName(package.appleID)).zip") { "application/zip" }
        } catch {
            return failure(error, version: nil)
        }
    }

    /// Sends one stored file, streamed in chunks (memory stays flat at any size), with its
    /// SHA-256 as a strong ETag, `Last-Modified`, a single `Range` (206, or 416 when nothing of
    /// the file is in it) honoured only while `If-Range` still names this file. `contentType`
    /// runs only when the body is sent: a revalidation reads nothing of the file.
    func send(
        _ file: StoredFile, _ request: Request, _ context: ServeContext, disposition: String? = nil,
        contentType: () -> String
    ) async throws -> Response {
        guard FileStatus(file.path)?.kind == .file else {
            throw GalleyError("the store lists `\(file.name)` but its file is gone", id: .storeFailed,
                              hint: "`galley store check` lists what is missing; import the issue again to mend it.")
        }
        let tag = "\"\(file.sha256)\""
        var headers: HTTPFields = [.eTag: tag, .acceptRanges: "bytes", .cacheControl: "public, max-age=31536000, immutable"]
        if let modified = Self.httpDate(rfc3339: file.lastUpdated) { headers[.lastModified] = modified }
        if Self.matches(request.headers[.ifNoneMatch], tag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = contentType()
        if let disposition { headers[.contentDisposition] = "attachment; filename=\"\(disposition)\"" }
        // RFC 9530: the whole file's digest, whatever part is sent.
        if let digest = Self.base64(hex: file.sha256) { headers[Self.reprDigest] = "sha-256=:\(digest):" }
        // If-Range with another validator: the client's partial copy is stale, send it all.
        let ifRange = request.headers[.ifRange]
        let rangeHeader = ifRange == nil || ifRange == tag ? request.headers[.range] : nil
        let bytes: ClosedRange<Int64>?
        var status = HTTPResponse.Status.ok
        switch ByteRange(header: rangeHeader, size: file.size) {
        case .whole: bytes = file.size > 0 ? 0...(file.size - 1) : nil
        case .part(let part):
            bytes = part
            status = .partialContent
            headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound)/\(file.size)"
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(file.size)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        }
        headers[.contentLength] = String(bytes.map { $0.upperBound - $0.lowerBound + 1 } ?? 0)
        guard request.method != .head, let bytes else { return Response(status: status, headers: headers) }
        return Response(status: status, headers: headers, body: Self.stream(file.path, bytes, on: context.eventLoop))
    }

    /// A file's bytes, one chunk read at a time: the next is read only once the connection has
    /// taken the last, so each download holds about two chunks whatever the file's size and
    /// however slow the client. (Hummingbird's `FileIO` reads through NIO's chunk sequence,
    /// which reads several chunks ahead of a slow socket: megabytes per download.)
    ///
    /// The writer alone does not bound it: `write` returns once the chunk is queued for the
    /// connection's event loop, and the connection says "not writable" only once the loop has
    /// handed the chunk to the socket. A busy loop (a fast client on a busy machine) let a
    /// download queue ~40 chunks ahead (38 MB over four downloads in heaptrack). Waiting for a
    /// no-op on that loop after each write means the chunk has reached the socket's buffer and
    /// the writability the next `write` waits on is current: one hop per chunk.
    static func stream(_ path: String, _ bytes: ClosedRange<Int64>, on eventLoop: any EventLoop) -> ResponseBody {
        ResponseBody(contentLength: Int(bytes.upperBound - bytes.lowerBound + 1)) { writer in
            try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path)) { handle in
                try await writeChunks(bytes, of: path, to: &writer, on: eventLoop) { offset, length in
                    try await handle.readChunk(fromAbsoluteOffset: offset, length: .bytes(length))
                }
            }
            try await writer.finish(nil)
        }
    }

    /// Writes `bytes` of a file, `chunkLength` at a time from `read(offset, length)`, each once
    /// the connection has taken the one before (see `stream`). A file cut short under us (an
    /// empty read) ends the answer rather than loops; the error names `path` (nil for the
    /// answer spool's unlinked file).
    static func writeChunks(
        _ bytes: ClosedRange<Int64>, of path: String?, to writer: inout any ResponseBodyWriter, on eventLoop: any EventLoop,
        read: (_ offset: Int64, _ length: Int64) async throws -> ByteBuffer
    ) async throws {
        var offset = bytes.lowerBound
        while offset <= bytes.upperBound {
            let chunk = try await read(offset, min(Self.chunkLength, bytes.upperBound - offset + 1))
            guard chunk.readableBytes > 0 else {
                throw GalleyError("the file ended early, at byte \(offset) of \(bytes.upperBound + 1)", id: .storeFailed, path: path,
                                  hint: "The store's file changed while it was sent; `galley store check` finds a damaged one.")
            }
            offset += Int64(chunk.readableBytes)
            try await writer.write(chunk)
            try await eventLoop.submit {}.get()
        }
    }

    /// Bytes read per step of a download. Measured with bench/serve_bench.py (4 downloads of
    /// the 190 MB zip against nginx's sendfile): 256 KB reached 0.75-0.80x nginx's throughput,
    /// 512 KB 0.82-1.03x at 54 MB peak, 1 MB 1.03x but 61 MB; each download holds about two.
    static let chunkLength: Int64 = 512 * 1024

    static let reprDigest = HTTPField.Name("Repr-Digest")!

    /// 64 hex digits as base64 (RFC 9530's byte sequence).
    static func base64(hex: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        return Data(bytes).base64EncodedString()
    }

    /// One name as the store records them: no folders, no `..`, nothing hidden or invisible.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255 && !name.hasPrefix(".") && !name.contains("/") && !name.contains("\\")
            && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// An RFC 3339 instant as an HTTP date (`Sun, 04 Jan 2026 18:30:00 GMT`).
    static func httpDate(rfc3339 text: String) -> String? {
        ISODateTime(parsing: text).map { HTTPDate.format(Int($0.millisecondsSinceEpoch / 1000)) }
    }
}
