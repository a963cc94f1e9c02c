import Foundation
import GalleyCore
import GalleyFormats
import GalleyStore
import HTTPTypes
import Hummingbird
import NIOCore
import _NIOFileSystem

extension GalleyServer {
    /// `GET`/`HEAD /issues/{id}/files/{name}`: one file of an issue, as it is now (its URL
    /// outlives versions, so caches revalidate it); `/issues/{id}/files/{sha256}/{name}`: that
    /// file while its content is `sha256` (a 404 once it changed), cached for good. Only names
    /// the store recorded for that issue are served: nothing else of the disk is reachable.
    func download(_ request: Request, _ context: ServeContext) async throws -> Response {
        do {
            let id = try context.parameters.require("id")
            // The router wants one capture name per position: the content's address is
            // `files/{name}/{file}` with the digest first.
            let digest = context.parameters.get("file") == nil ? nil : try context.parameters.require("name")
            let name = try context.parameters.get("file") ?? context.parameters.require("name")
            guard Self.isPlainName(name) else {
                throw GalleyError("no file `\(name)` in issue `\(id)`", id: .notFound)
            }
            let file = try await storeCall { try self.store.localFile(try self.store.file(name, issue: id)) }
            if let digest, digest != file.sha256 {
                throw GalleyError("issue `\(id)` no longer has this version of `\(name)`", id: .notFound,
                                  hint: "GET /issues/\(HTMLText.urlPath(id))/files/\(HTMLText.urlPath(name)) has the current one.")
            }
            let addressing: Addressing = digest == nil ? .byName : .byContent
            return try await send(file, request, context, addressing) { Self.mediaType(of: file.path, name: name) }
        } catch {
            return failure(error, version: nil)
        }
    }

    /// An issue's file's media type, from its bytes (the name can lie: validate warns of it),
    /// else JSON by its name, else `application/octet-stream`. `galley publish` gives a
    /// bucket's objects the same.
    package static func mediaType(of path: String, name: String) -> String {
        (try? MediaProber.probe(path: path))??.format.mimeType ?? (name.lowercased().hasSuffix(".json") ? json : "application/octet-stream")
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
            return try await send(file, request, context, .byContent, disposition: "\(SourceTree.zipSafeName(package.appleID)).zip") { "application/zip" }
        } catch {
            return failure(error, version: nil)
        }
    }

    /// How a download's URL names it, which decides how long caches keep it.
    enum Addressing {
        /// By its name: the URL outlives the content (a re-import changes the file behind it),
        /// so every cache revalidates (`no-cache`: a 304 costs no body).
        case byName
        /// By its content's SHA-256: the URL's bytes never change, so caches keep it for good.
        case byContent

        var cacheControl: String {
            switch self {
            case .byName: "public, no-cache"
            case .byContent: "public, max-age=31536000, immutable"
            }
        }
    }

    /// Sends one stored file, streamed in chunks (memory stays flat at any size), with its
    /// SHA-256 as a strong ETag, `Last-Modified` (and `If-Modified-Since` honoured when no
    /// `If-None-Match` came, as RFC 9110 orders them), a single `Range` (206, or 416 when
    /// nothing of the file is in it) honoured only while `If-Range` still names this file (its
    /// tag or its date). `contentType` runs only when the body is sent: a revalidation reads
    /// nothing of the file.
    func send(
        _ file: StoredFile, _ request: Request, _ context: ServeContext, _ addressing: Addressing, disposition: String? = nil,
        contentType: () -> String
    ) async throws -> Response {
        guard FileStatus(file.path)?.kind == .file else {
            throw GalleyError("the store lists `\(file.name)` but its file is gone", id: .storeFailed,
                              hint: "`galley store check` lists what is missing; import the issue again to mend it.")
        }
        let tag = "\"\(file.sha256)\""
        var headers: HTTPFields = [.eTag: tag, .acceptRanges: "bytes", .cacheControl: addressing.cacheControl]
        let modifiedSeconds = ISODateTime(parsing: file.lastUpdated).map { Int($0.millisecondsSinceEpoch / 1000) }
        let modified = modifiedSeconds.map(HTTPDate.format)
        if let modified { headers[.lastModified] = modified }
        if let asked = request.headers[.ifNoneMatch] {
            if Self.matches(asked, tag) { return Response(status: .notModified, headers: headers) }
        } else if let since = request.headers[.ifModifiedSince].flatMap(HTTPDate.parse), let modifiedSeconds, modifiedSeconds <= since {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = contentType()
        if let disposition { headers[.contentDisposition] = "attachment; filename=\"\(disposition)\"" }
        // RFC 9530: the whole file's digest, whatever part is sent.
        if let digest = Self.base64(hex: file.sha256) { headers[Self.reprDigest] = "sha-256=:\(digest):" }
        // If-Range with another validator: the client's partial copy is stale, send it all.
        let ifRange = request.headers[.ifRange]
        let rangeHeader = ifRange == nil || ifRange == tag || (ifRange != nil && ifRange == modified) ? request.headers[.range] : nil
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
        return Response(status: status, headers: headers, body: Self.stream(file.path, bytes, on: context.channel, limits: sending))
    }

    /// A file's bytes, one chunk read at a time: the next is read only once the connection has
    /// taken the last, so each download holds one chunk whatever the file's size and however
    /// slow the client, and all downloads together hold what `ChunkBudget` allows. (Hummingbird's
    /// `FileIO` reads through NIO's chunk sequence, which reads several chunks ahead of a slow
    /// socket: megabytes per download.)
    ///
    /// The writer alone does not bound it: `write` returns once the chunk is queued for the
    /// connection's event loop, and the connection says "not writable" only once the loop has
    /// handed the chunk to the socket. A busy loop (a fast client on a busy machine) let a
    /// download queue ~40 chunks ahead (38 MB over four downloads in heaptrack). Waiting for a
    /// no-op on that loop after each write means the chunk has reached the socket's buffer and
    /// the writability the next `write` waits on is current: one hop per chunk.
    static func stream(_ path: String, _ bytes: ClosedRange<Int64>, on channel: any Channel, limits: SendLimits) -> ResponseBody {
        ResponseBody(contentLength: Int(bytes.upperBound - bytes.lowerBound + 1)) { writer in
            try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path)) { handle in
                try await writeChunks(bytes, of: path, to: &writer, on: channel, limits: limits) { offset, length in
                    try await handle.readChunk(fromAbsoluteOffset: offset, length: .bytes(length))
                }
            }
            try await writer.finish(nil)
        }
    }

    /// Writes `bytes` of a file, at most `chunkLength` at a time from `read(offset, length)`,
    /// each once the connection has taken the one before (see `stream`), each of the size
    /// `limits.budget` grants. A file cut short under us (an empty read) ends the answer rather
    /// than loops; the error names `path` (nil for the answer spool's unlinked file). A chunk
    /// the reader has not taken within `limits.sendTimeout` closes the connection: a client that
    /// reads nothing (or next to nothing) would otherwise hold its chunk and its connection for
    /// as long as it likes.
    static func writeChunks(
        _ bytes: ClosedRange<Int64>, of path: String?, to writer: inout any ResponseBodyWriter, on channel: any Channel,
        limits: SendLimits, read: (_ offset: Int64, _ length: Int64) async throws -> ByteBuffer
    ) async throws {
        try await writeChunks(bytes, of: path, to: &writer, on: channel.eventLoop, limits: limits,
                              stalled: { [timeouts = limits.timeouts] in
                                  timeouts?.increment()
                                  channel.close(promise: nil)
                              }, read: read)
    }

    /// `writeChunks` with what to do when a chunk is not taken in time (`stalled`, run on `eventLoop`).
    static func writeChunks(
        _ bytes: ClosedRange<Int64>, of path: String?, to writer: inout any ResponseBodyWriter, on eventLoop: any EventLoop,
        limits: SendLimits, stalled: @escaping @Sendable () -> Void,
        read: (_ offset: Int64, _ length: Int64) async throws -> ByteBuffer
    ) async throws {
        var offset = bytes.lowerBound
        let watch = StallWatch(timeout: limits.sendTimeout, on: eventLoop, stalled)
        defer { watch.stop() }
        // The grant of the chunk last written, held until the connection has taken it.
        var sending = 0
        defer { limits.budget.giveBack(sending) }
        while offset <= bytes.upperBound {
            if sending > 0 {
                // An empty write returns once the connection is writable again, that is once it
                // has taken the last chunk: only then is the next one read, so a reader that
                // takes nothing holds one chunk, not that and the next.
                watch.waiting()
                try await writer.write(ByteBuffer())
                watch.progressed()
                limits.budget.giveBack(sending)
                sending = 0
            }
            let granted = limits.budget.take(Int(min(Self.chunkLength, bytes.upperBound - offset + 1)))
            sending = granted
            let chunk = try await read(offset, Int64(granted))
            guard chunk.readableBytes > 0 else {
                throw GalleyError("the file ended early, at byte \(offset) of \(bytes.upperBound + 1)", id: .storeFailed, path: path,
                                  hint: "The store's file changed while it was sent; `galley store check` finds a damaged one.")
            }
            offset += Int64(chunk.readableBytes)
            watch.waiting()
            try await writer.write(chunk)
            try await eventLoop.submit {}.get()
            watch.progressed()
        }
    }

    /// The largest chunk a download reads at a time (`ChunkBudget` may grant less). Measured
    /// with bench/serve_bench.py (4 downloads of the 190 MB zip against nginx's sendfile): 256 KB
    /// reached 0.75-0.80x nginx's throughput, 512 KB 0.82-1.03x, 1 MB 1.03x at more memory.
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

}
