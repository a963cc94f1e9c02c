import AsyncHTTPClient
import Crypto
import Foundation
import GalleyCore
import GalleyStore
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// Where blobs on S3-compatible object storage are: `s3://BUCKET[/PREFIX]`, with the endpoint,
/// region and credentials from the usual AWS environment variables (`AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` or `AWS_DEFAULT_REGION`, and
/// `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` for another service than AWS, addressed
/// path-style: MinIO, Ceph, SeaweedFS).
struct S3Location: Sendable, Hashable {
    var bucket: String
    /// Without leading or trailing slashes; may be empty.
    var prefix: String
    /// `scheme://host[:port]` of the service.
    var endpoint: URL
    /// Path-style (`/BUCKET/KEY` on the endpoint) for custom endpoints; virtual-hosted
    /// (`BUCKET.s3.REGION.amazonaws.com/KEY`) on AWS.
    var pathStyle: Bool
    var region: String
    var accessKey: String
    var secretKey: String
    var sessionToken: String?

    static func isAddress(_ text: String) -> Bool { text.hasPrefix("s3://") }

    init(_ text: String, environment: [String: String]) throws {
        let hint = "Write it as s3://BUCKET/PREFIX, with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_REGION set "
            + "(and AWS_ENDPOINT_URL for a service other than AWS)."
        guard Self.isAddress(text), let parts = URLComponents(string: text), let bucket = parts.host, !bucket.isEmpty,
              parts.query == nil, parts.user == nil else {
            throw GalleyError("`\(text)` is not an S3 blob address", id: .usage, hint: hint)
        }
        self.bucket = bucket
        prefix = parts.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        region = environment["AWS_REGION"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        guard let access = environment["AWS_ACCESS_KEY_ID"], !access.isEmpty,
              let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else {
            throw GalleyError("S3 blobs need credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set", id: .usage,
                              path: text, hint: hint)
        }
        accessKey = access
        secretKey = secret
        sessionToken = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        if let custom = environment["AWS_ENDPOINT_URL_S3"] ?? environment["AWS_ENDPOINT_URL"], !custom.isEmpty {
            guard let url = URL(string: custom), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw GalleyError("AWS_ENDPOINT_URL `\(custom)` is not an http or https address", id: .usage, hint: hint)
            }
            endpoint = url
            pathStyle = true
        } else {
            guard let url = URL(string: "https://s3.\(region).amazonaws.com"), url.host != nil else {
                throw GalleyError("AWS_REGION `\(region)` is not a region name", id: .usage, hint: hint)
            }
            endpoint = url
            pathStyle = false
        }
    }

    var display: String { "s3://\(bucket)" + (prefix.isEmpty ? "" : "/\(prefix)") }

    func key(_ sha256: String) -> String {
        (prefix.isEmpty ? "" : prefix + "/") + "\(sha256.prefix(2))/\(sha256)"
    }

    /// The Host header and the path (`/KEY`, or `/BUCKET/KEY` path-style) of an object.
    func hostAndPath(_ key: String) -> (host: String, path: String) {
        let port = endpoint.port.map { ":\($0)" } ?? ""
        if pathStyle {
            return ((endpoint.host ?? "") + port, "/" + bucket + (key.isEmpty ? "" : "/" + key))
        }
        return ("\(bucket).s3.\(region).amazonaws.com" + port, "/" + key)
    }
}

/// AWS Signature Version 4 for S3 requests. Hand-written (about forty lines over swift-crypto's
/// HMAC and SHA-256) because the Swift AWS SDKs are not in the package mirror; checked against
/// AWS's published example in the tests.
enum SigV4 {
    /// The headers to send: `headers` plus `x-amz-date`, `x-amz-content-sha256`, the session
    /// token if any, and `Authorization`, which signs all of them and `host`.
    static func sign(
        method: String, host: String, path: String, query: [(String, String)], headers: [(String, String)],
        payloadHash: String, region: String, accessKey: String, secretKey: String, sessionToken: String?, date: Date
    ) -> [(String, String)] {
        let (amzDate, day) = stamps(date)
        var all = headers + [("host", host), ("x-amz-content-sha256", payloadHash), ("x-amz-date", amzDate)]
        if let sessionToken { all.append(("x-amz-security-token", sessionToken)) }
        let canonicalHeaders = all.map { ($0.0.lowercased(), $0.1.trimmingCharacters(in: .whitespaces)) }.sorted { $0.0 < $1.0 }
        let signedHeaders = canonicalHeaders.map(\.0).joined(separator: ";")
        let encodedQuery: [(String, String)] = query.map { (encode($0.0), encode($0.1)) }
        let sortedQuery = encodedQuery.sorted { (a: (String, String), b: (String, String)) -> Bool in a.0 == b.0 ? a.1 < b.1 : a.0 < b.0 }
        let canonicalQuery = sortedQuery.map { (pair: (String, String)) -> String in pair.0 + "=" + pair.1 }.joined(separator: "&")
        let canonicalPath = encodePath(path)
        let canonicalRequest = [method, canonicalPath, canonicalQuery,
                                canonicalHeaders.map { "\($0.0):\($0.1)\n" }.joined(), signedHeaders, payloadHash].joined(separator: "\n")
        let scope = "\(day)/\(region)/s3/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, hex(SHA256.hash(data: Data(canonicalRequest.utf8)))].joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(secretKey)".utf8))
        for part in [day, region, "s3", "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        let authorization = "AWS4-HMAC-SHA256 Credential=\(accessKey)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        return all.filter { $0.0 != "host" } + [("Authorization", authorization)]
    }

    /// `yyyyMMdd'T'HHmmss'Z'` and `yyyyMMdd`, in UTC.
    static func stamps(_ date: Date) -> (String, String) {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))"
        return ("\(day)T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z", day)
    }

    /// A path with each segment encoded (`/` kept), as SigV4 signs it and as it is sent.
    static func encodePath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { encode(String($0)) }.joined(separator: "/")
    }

    /// RFC 3986 percent-encoding of everything but the unreserved characters, as SigV4 wants.
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF")
                out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
            }
        }
        return out
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}

/// Blobs in an S3 bucket (`S3Location`), under `PREFIX/ab/abcdef…`. An import uploads each blob
/// once (a HEAD first: a blob already there is not sent again), a single PUT whose
/// `x-amz-content-sha256` is the blob's own SHA-256 (the service refuses bytes that do not match
/// it), or a multipart upload for large files, each part hashed the same way; memory stays one
/// part. Readers get a local copy, fetched once into this machine's cache and checked against
/// the SHA-256 (blobs never change, so a cached copy is never stale); the cache keeps the most
/// recently used blobs within `cacheLimit` bytes (`GALLEY_BLOB_CACHE_MB`, 1 GiB by default).
final class S3Blobs: BlobStore, @unchecked Sendable {
    let location: S3Location
    let root: URL
    let partSize: Int
    let cacheLimit: Int64
    private let group: MultiThreadedEventLoopGroup
    private let http: HTTPClient

    init(_ location: S3Location, root: URL, partSize: Int = 16 << 20, cacheLimit: Int64 = 1 << 30) {
        self.location = location
        self.root = root
        self.partSize = max(partSize, 5 << 20)
        self.cacheLimit = cacheLimit
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(60))
        http = HTTPClient(eventLoopGroupProvider: .shared(group), configuration: configuration)
    }

    deinit {
        try? http.syncShutdown()
        try? group.syncShutdownGracefully()
    }

    var staging: URL { root.appending(path: "staging") }
    var cache: URL { root.appending(path: "cache") }
    var display: String { location.display }
    var isLocal: Bool { false }

    func address(_ sha256: String) -> String { "s3://\(location.bucket)/\(location.key(sha256))" }
    func name(_ sha256: String) -> String { address(sha256) }

    func createFolders() throws {
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
    }

    // MARK: Requests

    struct Answer {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var body: ByteBuffer?
        var text: String { body.map { String(buffer: $0) } ?? "" }
    }

    /// One signed request, its answer collected (small bodies only: listings, errors, XML).
    private func send(_ method: HTTPMethod, key: String, query: [(String, String)] = [], body: ByteBuffer? = nil,
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

    private func unreachable(_ error: any Error) -> GalleyError {
        GalleyError("cannot reach the blob store \(location.display) at \(location.endpoint.absoluteString): \(error)",
                    id: .storeFailed, hint: "Check AWS_ENDPOINT_URL, the network, and that the service is up.")
    }

    /// The service's refusal in words (its XML `Code` and `Message`).
    private func failure(_ what: String, _ answer: Answer) -> GalleyError {
        let reason = [Self.element("Code", in: answer.text), Self.element("Message", in: answer.text)].compactMap { $0 }.joined(separator: ": ")
        return GalleyError("\(what) on \(location.display): HTTP \(answer.status.code)\(reason.isEmpty ? "" : " (\(reason))")",
                           id: .storeFailed, hint: "Check the bucket's name, that it exists, and the credentials' rights on it.")
    }

    /// The blob's size, or nil when it is not there.
    func size(_ sha256: String) throws -> Int64? {
        let answer = try send(.HEAD, key: location.key(sha256))
        if answer.status == .notFound { return nil }
        guard answer.status == .ok else { throw failure("cannot look up \(name(sha256))", answer) }
        return answer.headers.first(name: "content-length").flatMap { Int64($0) }
    }

    func place(_ staged: URL, sha256: String, size: Int64) throws -> Bool {
        defer { try? FileManager.default.removeItem(at: staged) }
        if try self.size(sha256) == size { return false }
        let key = location.key(sha256)
        guard let file = FileHandle(forReadingAtPath: staged.path) else {
            throw GalleyError("cannot read the staged file \(staged.path)", id: .storeFailed)
        }
        defer { try? file.close() }
        if size <= Int64(partSize) {
            let data = try file.readToEnd() ?? Data()
            let answer = try send(.PUT, key: key, body: ByteBuffer(bytes: data), payloadHash: sha256,
                                  extra: [("content-type", "application/octet-stream")])
            guard answer.status == .ok else { throw failure("cannot upload \(name(sha256))", answer) }
            return true
        }
        try multipart(file, key: key, sha256: sha256)
        return true
    }

    /// A multipart upload, one part in memory at a time; aborted on any failure.
    private func multipart(_ file: FileHandle, key: String, sha256: String) throws {
        let started = try send(.POST, key: key, query: [("uploads", "")])
        guard started.status == .ok, let uploadID = Self.element("UploadId", in: started.text) else {
            throw failure("cannot start uploading \(name(sha256))", started)
        }
        do {
            var parts: [(Int, String)] = []
            while let chunk = try file.read(upToCount: partSize), !chunk.isEmpty {
                let number = parts.count + 1
                let answer = try send(.PUT, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                                      body: ByteBuffer(bytes: chunk))
                guard answer.status == .ok, let tag = answer.headers.first(name: "etag") else {
                    throw failure("cannot upload part \(number) of \(name(sha256))", answer)
                }
                parts.append((number, tag))
            }
            let list = parts.map { "<Part><PartNumber>\($0.0)</PartNumber><ETag>\($0.1)</ETag></Part>" }.joined()
            let done = try send(.POST, key: key, query: [("uploadId", uploadID)],
                                body: ByteBuffer(string: "<CompleteMultipartUpload>\(list)</CompleteMultipartUpload>"))
            guard done.status == .ok, !done.text.contains("<Error>") else { throw failure("cannot finish uploading \(name(sha256))", done) }
        } catch {
            _ = try? send(.DELETE, key: key, query: [("uploadId", uploadID)])
            throw error
        }
    }

    func remove(_ sha256: String) {
        _ = try? send(.DELETE, key: location.key(sha256))
        try? FileManager.default.removeItem(at: Self.fanOut(cache, sha256))
    }

    func all() throws -> [String] {
        var found: [String] = []
        var token: String?
        let prefix = location.prefix.isEmpty ? "" : location.prefix + "/"
        repeat {
            var query = [("list-type", "2"), ("prefix", prefix)]
            if let token { query.append(("continuation-token", token)) }
            let answer = try send(.GET, key: "", query: query)
            guard answer.status == .ok else { throw failure("cannot list the blobs", answer) }
            var rest = answer.text[...]
            while let start = rest.range(of: "<Key>"), let end = rest.range(of: "</Key>", range: start.upperBound..<rest.endIndex) {
                let key = rest[start.upperBound..<end.lowerBound]
                if let name = key.split(separator: "/").last, Self.isBlobName(name), key == location.key(String(name)) {
                    found.append(String(name))
                }
                rest = rest[end.upperBound...]
            }
            token = answer.text.contains("<IsTruncated>true</IsTruncated>") ? Self.element("NextContinuationToken", in: answer.text) : nil
        } while token != nil
        return found.sorted()
    }

    func verify(_ sha256: String, size: Int64) -> String? {
        // The content was checked by the service against its SHA-256 on upload; a listing or a
        // HEAD cannot re-read it, so the size is what is checked here.
        do {
            guard let stored = try self.size(sha256) else { return "missing" }
            return stored == size ? nil : "\(stored) bytes, recorded \(size)"
        } catch {
            return "\(error)"
        }
    }

    func localFile(_ sha256: String, size: Int64) throws -> URL {
        let cached = Self.fanOut(cache, sha256)
        if FileStatus(cached.path)?.size == size {
            utimes(cached.path, nil)  // recently used: the last the cache lets go
            return cached
        }
        try FileManager.default.createDirectory(at: cached.deletingLastPathComponent(), withIntermediateDirectories: true)
        let partial = cached.deletingLastPathComponent().appending(path: ".\(sha256).\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: partial) }
        let status: HTTPResponseStatus
        do {
            let request = try signed(.GET, key: location.key(sha256), query: [], payloadHash: SigV4.hex(SHA256.hash(data: Data())))
            let delegate = try FileDownloadDelegate(path: partial.path)
            status = try http.execute(request: request, delegate: delegate, deadline: .now() + .seconds(3600)).futureResult.wait().head.status
        } catch {
            throw unreachable(error)
        }
        guard status == .ok else {
            throw GalleyError("cannot fetch \(name(sha256)): HTTP \(status.code)", id: .storeFailed,
                              hint: "`galley store check` tells whether the blob store lost it.")
        }
        guard (try? FileDigest.of(partial.path).sha256) == sha256 else {
            throw GalleyError("\(name(sha256)) came back with other content than its SHA-256", id: .storeFailed,
                              hint: "`galley store check` tells whether the blob store lost it.")
        }
        guard rename(partial.path, cached.path) == 0 else {
            throw GalleyError("cannot keep a copy of \(name(sha256)) in \(cache.path)", id: .storeFailed,
                              hint: "Check the free space and permissions of \(root.path).")
        }
        trimCache(keeping: cached)
        return cached
    }

    /// Removes the least recently used cached blobs until the cache is within `cacheLimit`
    /// (never `keeping`, the one just fetched). A reader that has one open keeps reading it.
    private func trimCache(keeping: URL) {
        let manager = FileManager.default
        var entries: [(url: URL, size: Int64, used: Date)] = []
        for folder in (try? manager.contentsOfDirectory(atPath: cache.path)) ?? [] where folder.utf8.count == 2 {
            let base = cache.appending(path: folder)
            for name in (try? manager.contentsOfDirectory(atPath: base.path)) ?? [] where Self.isBlobName(name) {
                let url = base.appending(path: name)
                let attributes = try? manager.attributesOfItem(atPath: url.path)
                entries.append((url, (attributes?[.size] as? NSNumber)?.int64Value ?? 0, attributes?[.modificationDate] as? Date ?? .distantPast))
            }
        }
        var total = entries.reduce(0) { $0 + $1.size }
        for entry in entries.sorted(by: { $0.used < $1.used }) where total > cacheLimit && entry.url != keeping {
            try? manager.removeItem(at: entry.url)
            total -= entry.size
        }
    }

    /// Makes the bucket (for tests and first set-up); an existing one of ours is fine.
    func createBucket() throws {
        let answer = try send(.PUT, key: "")
        guard answer.status == .ok || answer.text.contains("BucketAlreadyOwnedByYou") else { throw failure("cannot create the bucket", answer) }
    }

    static func element(_ name: String, in text: String) -> String? {
        guard let start = text.range(of: "<\(name)>"), let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex)
        else { return nil }
        return String(text[start.upperBound..<end.lowerBound])
    }
}
