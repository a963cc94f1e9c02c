import AsyncHTTPClient
import Crypto
import Foundation
import GalleyCore
import NIOCore
import NIOHTTP1
import NIOPosix

/// The S3 calls Galley makes (object HEAD, PUT single or multipart, GET into a file, DELETE,
/// ListObjectsV2, bucket creation) on one `S3Location`, each signed with `SigV4`. Blocking: its
/// callers (the blob store, `galley publish`) are synchronous code on their own threads.
/// Every refusal comes back as a `GalleyError` naming the service's own `Code` and `Message`.
package final class S3Client: @unchecked Sendable {
    package let location: S3Location
    /// The largest object sent in one PUT; larger ones go up in parts of this size, one in
    /// memory at a time (S3's smallest part is 5 MiB).
    package let partSize: Int
    /// What a failure is, for scripts: `store.failed` for the store's blobs,
    /// `output.unwritable` for a publish.
    package let failureID: ErrorID
    private let group: MultiThreadedEventLoopGroup
    private let http: HTTPClient

    package init(_ location: S3Location, partSize: Int = 16 << 20, failureID: ErrorID = .storeFailed) {
        self.location = location
        self.failureID = failureID
        self.partSize = max(partSize, 5 << 20)
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(60))
        http = HTTPClient(eventLoopGroupProvider: .shared(group), configuration: configuration)
    }

    deinit {
        try? http.syncShutdown()
        try? group.syncShutdownGracefully()
    }

    package struct Answer {
        package var status: HTTPResponseStatus
        package var headers: HTTPHeaders
        package var body: ByteBuffer?
        package var text: String { body.map { String(buffer: $0) } ?? "" }
    }

    /// What a listing says of one object.
    package struct Object: Sendable, Equatable {
        /// The key under the location's prefix (`a/b.json` for `PREFIX/a/b.json`).
        package var path: String
        package var size: Int64
    }

    /// The headers a PUT gives the object (S3 keeps them and answers every GET with them).
    package struct ObjectHeaders: Sendable {
        package var contentType: String
        package var cacheControl: String?

        package init(contentType: String, cacheControl: String? = nil) {
            self.contentType = contentType
            self.cacheControl = cacheControl
        }

        var pairs: [(String, String)] {
            [("content-type", contentType)] + (cacheControl.map { [("cache-control", $0)] } ?? [])
        }
    }

    /// One signed request, its answer collected (small bodies only: listings, errors, XML).
    package func send(_ method: HTTPMethod, key: String, query: [(String, String)] = [], body: ByteBuffer? = nil,
                      payloadHash: String? = nil, extra: [(String, String)] = []) throws -> Answer {
        let hash = payloadHash ?? SigV4.hex(SHA256.hash(data: body.map { Data($0.readableBytesView) } ?? Data()))
        do {
            let request = try signed(method, key: key, query: query, payloadHash: hash, extra: extra, body: body)
            let response = try http.execute(request: request, deadline: .now() + .seconds(600)).wait()
            return Answer(status: response.status, headers: response.headers, body: response.body)
        } catch {
            throw unreachable(error)
        }
    }

    /// A request for `key`, signed (AWS Signature V4) and addressed as the location wants.
    private func signed(_ method: HTTPMethod, key: String, query: [(String, String)], payloadHash: String,
                        extra: [(String, String)] = [], body: ByteBuffer? = nil) throws -> HTTPClient.Request {
        let (host, path) = location.hostAndPath(key)
        let headers = SigV4.sign(method: method.rawValue, host: host, path: path, query: query, headers: extra, payloadHash: payloadHash,
                                 region: location.region, accessKey: location.accessKey, secretKey: location.secretKey,
                                 sessionToken: location.sessionToken, date: Date())
        let queryText = query.map { "\(SigV4.encode($0.0))=\(SigV4.encode($0.1))" }.joined(separator: "&")
        let url = "\(location.endpoint.scheme ?? "https")://\(host)\(SigV4.encodePath(path))" + (queryText.isEmpty ? "" : "?" + queryText)
        return try HTTPClient.Request(url: url, method: method, headers: HTTPHeaders(headers), body: body.map { .byteBuffer($0) })
    }

    package func unreachable(_ error: any Error) -> GalleyError {
        if let error = error as? GalleyError { return error }
        return GalleyError("cannot reach \(location.display) at \(location.endpoint.absoluteString): \(error)",
                           id: failureID, hint: "Check AWS_ENDPOINT_URL, the network, and that the service is up.")
    }

    /// The service's refusal in words (its XML `Code` and `Message`).
    package func failure(_ what: String, _ answer: Answer) -> GalleyError {
        let reason = [Self.element("Code", in: answer.text), Self.element("Message", in: answer.text)].compactMap { $0 }.joined(separator: ": ")
        return GalleyError("\(what) on \(location.display): HTTP \(answer.status.code)\(reason.isEmpty ? "" : " (\(reason))")",
                           id: failureID, hint: "Check the bucket's name, that it exists, and the credentials' rights on it.")
    }

    /// The object's size, or nil when it is not there.
    package func size(_ key: String) throws -> Int64? {
        let answer = try send(.HEAD, key: key)
        if answer.status == .notFound { return nil }
        guard answer.status == .ok else { throw failure("cannot look up \(key)", answer) }
        return answer.headers.first(name: "content-length").flatMap { Int64($0) }
    }

    /// `data` as the object `key`, signed with its SHA-256 (the service refuses bytes that do
    /// not match it).
    package func put(_ data: Data, key: String, headers: ObjectHeaders) throws {
        let answer = try send(.PUT, key: key, body: ByteBuffer(bytes: data), extra: headers.pairs)
        guard answer.status == .ok else { throw failure("cannot upload \(key)", answer) }
    }

    /// The file at `path` as the object `key`: one PUT whose `x-amz-content-sha256` is `sha256`
    /// (the file's, known to the caller) up to `partSize`, a multipart upload above it.
    package func put(file path: String, sha256: String, key: String, headers: ObjectHeaders) throws {
        guard let file = FileHandle(forReadingAtPath: path) else {
            throw GalleyError("cannot read \(path)", id: failureID, path: path, hint: "Check that it exists and can be read.")
        }
        defer { try? file.close() }
        let size = FileStatus(path)?.size ?? 0
        if size <= Int64(partSize) {
            let data = try file.readToEnd() ?? Data()
            let answer = try send(.PUT, key: key, body: ByteBuffer(bytes: data), payloadHash: sha256, extra: headers.pairs)
            guard answer.status == .ok else { throw failure("cannot upload \(key)", answer) }
            return
        }
        try multipart(file, key: key, headers: headers)
    }

    /// A multipart upload, one part in memory at a time, each part signed with its own
    /// SHA-256; aborted on any failure, so no half object is left behind.
    private func multipart(_ file: FileHandle, key: String, headers: ObjectHeaders) throws {
        let started = try send(.POST, key: key, query: [("uploads", "")], extra: headers.pairs)
        guard started.status == .ok, let uploadID = Self.element("UploadId", in: started.text) else {
            throw failure("cannot start uploading \(key)", started)
        }
        do {
            var parts: [(Int, String)] = []
            while let chunk = try file.read(upToCount: partSize), !chunk.isEmpty {
                let number = parts.count + 1
                let answer = try send(.PUT, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                                      body: ByteBuffer(bytes: chunk))
                guard answer.status == .ok, let tag = answer.headers.first(name: "etag") else {
                    throw failure("cannot upload part \(number) of \(key)", answer)
                }
                parts.append((number, tag))
            }
            let list = parts.map { "<Part><PartNumber>\($0.0)</PartNumber><ETag>\($0.1)</ETag></Part>" }.joined()
            let done = try send(.POST, key: key, query: [("uploadId", uploadID)],
                                body: ByteBuffer(string: "<CompleteMultipartUpload>\(list)</CompleteMultipartUpload>"))
            guard done.status == .ok, !done.text.contains("<Error>") else { throw failure("cannot finish uploading \(key)", done) }
        } catch {
            _ = try? send(.DELETE, key: key, query: [("uploadId", uploadID)])
            throw error
        }
    }

    /// Removes the object; one that is not there is no failure (S3 answers 204 either way).
    package func delete(_ key: String) throws {
        let answer = try send(.DELETE, key: key)
        guard [.noContent, .ok, .notFound].contains(answer.status) else { throw failure("cannot remove \(key)", answer) }
    }

    /// Every object under the location's prefix (`within`, a further folder, narrows it), a
    /// page of a thousand per request.
    package func list(within folder: String = "") throws -> [Object] {
        var found: [Object] = []
        var token: String?
        let base = location.prefix.isEmpty ? "" : location.prefix + "/"
        repeat {
            var query = [("list-type", "2"), ("prefix", base + folder)]
            if let token { query.append(("continuation-token", token)) }
            let answer = try send(.GET, key: "", query: query)
            guard answer.status == .ok else { throw failure("cannot list \(location.display)", answer) }
            var rest = answer.text[...]
            while let start = rest.range(of: "<Contents>"), let end = rest.range(of: "</Contents>", range: start.upperBound..<rest.endIndex) {
                let entry = String(rest[start.upperBound..<end.lowerBound])
                if let key = Self.element("Key", in: entry).map(Self.unescapeXML), key.hasPrefix(base) {
                    found.append(Object(path: String(key.dropFirst(base.count)), size: Self.element("Size", in: entry).flatMap { Int64($0) } ?? 0))
                }
                rest = rest[end.upperBound...]
            }
            token = answer.text.contains("<IsTruncated>true</IsTruncated>") ? Self.element("NextContinuationToken", in: answer.text) : nil
        } while token != nil
        return found
    }

    /// The object `key` into the file at `path` (streamed, never whole in memory); returns
    /// the answer's status (200 when it came, 404 when there is none).
    package func download(_ key: String, to path: String) throws -> HTTPResponseStatus {
        do {
            let request = try signed(.GET, key: key, query: [], payloadHash: SigV4.hex(SHA256.hash(data: Data())))
            let delegate = try FileDownloadDelegate(path: path)
            return try http.execute(request: request, delegate: delegate, deadline: .now() + .seconds(3600)).futureResult.wait().head.status
        } catch {
            throw unreachable(error)
        }
    }

    /// Makes the bucket (for tests and first set-up); an existing one of ours is fine.
    package func createBucket() throws {
        let answer = try send(.PUT, key: "")
        guard answer.status == .ok || answer.text.contains("BucketAlreadyOwnedByYou") else { throw failure("cannot create the bucket", answer) }
    }

    package static func element(_ name: String, in text: String) -> String? {
        guard let start = text.range(of: "<\(name)>"), let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex)
        else { return nil }
        return String(text[start.upperBound..<end.lowerBound])
    }

    /// A listing's key as it is: XML escapes `&`, `<`, `>`, `'` and `"` in it.
    static func unescapeXML(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }
}
