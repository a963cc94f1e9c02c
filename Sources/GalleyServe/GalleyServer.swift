import Foundation
import GalleyCore
import GalleyFormats
import GalleyKit
import GalleySigning
import GalleyStore
import CompressNIO
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix

public struct ServeOptions: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var logLevel: Logger.Level = .info
    /// The address apps reach this server at (`https://cdn.example.com`), for the feed's
    /// `file_path`s; nil: what a trusted proxy forwards, else the address the connection
    /// reached (never the `Host` a client sent).
    public var publicURL: String?
    /// The proxies whose `Forwarded` and `X-Forwarded-*` headers name the links' origin.
    public var trustedProxies = TrustedProxies.none
    /// How long a shared cache (a CDN, nginx) may keep a JSON answer, in seconds; 0: it
    /// revalidates every time (`no-cache`).
    public var sharedMaxAge = 10
    /// How long past that a shared cache may still answer with it while it revalidates.
    public var staleWhileRevalidate = 60
    /// The origins whose web pages may read the answers (CORS), `*` for any; empty, none.
    public var corsOrigins: [String] = []
    /// Writes (upload, delete) with this bearer token; nil: writes are off.
    public var token: String?
    /// The largest zip `POST /issues` takes, in bytes.
    public var maxUpload: Int64 = 512 * 1024 * 1024
    /// Seconds a connection may stay silent (between requests, or while its headers trickle
    /// in) before it is closed.
    public var idleTimeout: Int64 = 30
    /// Seconds a download's reader may take to accept one chunk (16 to 512 KiB) before the
    /// connection is closed: a client that reads nothing frees its memory and its connection.
    public var sendTimeout: Int64 = 60
    /// Connections served at once; one past it is answered 503 (`/healthz` and `/metrics`
    /// excepted) and closed. `ConnectionGate.connectionsThatFit` says how many the process's
    /// open-file limit allows.
    public var maxConnections = 1024
    /// Signs the feed answers (`Galley-Signature`, docs/sync.md); nil: unsigned.
    public var signingKey: FeedSigningKey?
    /// How long a signature holds, in seconds: clients warn about a feed past it (a server
    /// frozen on old content). Answers are signed anew every half of it.
    public var signatureLifetime: TimeInterval = 7 * 86_400

    public init(host: String = "127.0.0.1", port: Int = 8080) {
        self.host = host
        self.port = port
    }
}

/// `galley serve`: the store as a versioned, read-only JSON API with file downloads
/// (docs/serve.md). Every answer is built from the `IssueStore` protocol, so any backend serves.
public struct GalleyServer: Sendable {
    public let store: any IssueStore
    /// See `ServeOptions.publicURL`.
    public let publicURL: String?
    let corsOrigins: [String]
    let trustedProxies: TrustedProxies
    /// The `Cache-Control` of every JSON answer and its 304s.
    let jsonCacheControl: String
    /// Who may write; nil: writes are off.
    let writes: WriteAccess?
    /// Request counts and latencies for `/metrics`.
    public let metrics: ServeMetrics
    /// The open connections, against `ServeOptions.maxConnections`.
    let gate: ConnectionGate
    /// The answers made at the store's current revision.
    let cache: ResponseCache
    /// Where large answers are written (nil: `TMPDIR`).
    let spoolFolder: String?
    let signingKey: FeedSigningKey?
    let signatureLifetime: TimeInterval
    /// The chunk budget downloads share and how long a reader may take to accept one chunk
    /// (`ServeOptions.sendTimeout`).
    let sending: SendLimits
    /// The server's log, on standard error (standard output is the listening line scripts
    /// read): access lines, and what failed behind a 5xx.
    let logger: Logger

    public init(store: any IssueStore, options: ServeOptions = ServeOptions()) {
        self.init(store: store, options: options, cache: ResponseCache())
    }

    /// A server whose answer cache is `cache` (its capacity also bounds what an answer keeps
    /// in memory) and whose large answers go to a file in `spoolFolder` (nil: `TMPDIR`; see
    /// `AnswerSpool`).
    init(store: any IssueStore, options: ServeOptions, cache: ResponseCache, spoolFolder: String? = nil) {
        self.cache = cache
        self.spoolFolder = spoolFolder
        self.store = store
        publicURL = options.publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        corsOrigins = options.corsOrigins
        trustedProxies = options.trustedProxies
        jsonCacheControl = Self.jsonCacheControl(sharedMaxAge: options.sharedMaxAge, staleWhileRevalidate: options.staleWhileRevalidate)
        writes = WriteAccess(token: options.token, maxUpload: options.maxUpload)
        signingKey = options.signingKey
        signatureLifetime = options.signatureLifetime
        let metrics = ServeMetrics()
        self.metrics = metrics
        sending = SendLimits(budget: ChunkBudget(), sendTimeout: .seconds(options.sendTimeout), timeouts: metrics.sendTimeouts)
        gate = ConnectionGate(limit: options.maxConnections, refusals: metrics.refusedConnections)
        var logger = Logger(label: "galley.serve", factory: { ServeLogHandler(label: $0) })
        logger.logLevel = options.logLevel
        self.logger = logger
    }

    /// An article page's policy: media only from this server (its downloads), and never
    /// framed by another site (`frame-ancestors`, which a page's `<meta>` cannot carry).
    static let pagePolicy = PageRenderer.policy(allowingMedia: ["'self'", "data:"]) + "; frame-ancestors 'none'"

    /// The headers a browser page may read (CORS): the validators, paging and versions.
    static let exposedHeaders = ["ETag", "Link", "Content-Version", "Deprecation", "Sunset", "Content-Range", "Repr-Digest", "Galley-Signature"]

    package static let json = "application/json;charset=UTF-8"
    static let contentVersion = HTTPField.Name("Content-Version")!
    static let acceptVersion = HTTPField.Name("Accept-Version")!
    static let deprecation = HTTPField.Name("Deprecation")!
    static let sunset = HTTPField.Name("Sunset")!
    static let link = HTTPField.Name("Link")!
    static let signature = HTTPField.Name(FeedSignature.headerName)!

    /// The routes, grouped by resource (`Routes/`): each JSON resource at `/PATH` (version from
    /// `Accept-Version`), `/v1/PATH` and `/v2/PATH`, one Hummingbird route collection per
    /// resource and prefix; the operations' routes (health, metrics, the contract) once.
    /// Every GET route also answers HEAD (Hummingbird's generated HEAD drops the body and keeps
    /// its headers); a request of another method is a 405 with `Allow` (`RequestRules`).
    public func router() -> Router<ServeContext> {
        let router = Router(context: ServeContext.self, options: .autoGenerateHeadEndpoints)
        let table = RouteTable()
        router.add(middleware: AccessMiddleware(metrics: metrics))
        if !corsOrigins.isEmpty {
            router.add(middleware: CORSPolicy(
                origins: corsOrigins, exposed: Self.exposedHeaders,
                allowedHeaders: [.accept, .acceptEncoding, Self.acceptVersion, .ifNoneMatch, .ifRange, .range, .authorization, .contentType,
                                 .ifModifiedSince]))
        }
        router.add(middleware: RequestRules(server: self, table: table))
        router.addRoutes(operationRoutes(ResourceRoutes(server: self, version: nil, table: table)))
        let resources: [(ResourceRoutes) -> Void] = [
            feedRoutes, issueRoutes, articleRoutes, pageRoutes, assetRoutes, searchRoutes, downloadRoutes, writeRoutes,
        ]
        for version in [nil] + APIVersion.allCases.map(Optional.some) {
            for add in resources {
                let routes = ResourceRoutes(server: self, version: version, table: table)
                add(routes)
                router.addRoutes(routes.collection, atPath: RouterPath(version?.prefix ?? ""))
            }
        }
        return router
    }

    /// The Drupal packager's `{version, file_path}`, with what a client checks a download
    /// against.
    package struct PackageAnswer: Encodable {
        var appleID: String
        var globalID: String
        var version: Int64
        var filePath: String
        var size: Int64
        var sha256: String
        var lastUpdated: String

        /// `relative`: `file_path` without a base (`packages/...`, resolved against the feed's own
        /// address, as a static site's feed is read).
        package init(_ package: StoredPackage, base: String, relative: Bool = false) {
            appleID = package.appleID
            globalID = package.globalID
            version = package.version
            filePath = (relative ? "" : "\(base)/") + "packages/\(package.appleID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? package.appleID)/\(package.sha256).zip"
            size = package.size
            sha256 = package.sha256
            lastUpdated = package.lastUpdated
        }

        enum CodingKeys: String, CodingKey {
            case version, size, sha256
            case appleID = "apple_id"
            case globalID = "global_id"
            case filePath = "file_path"
            case lastUpdated = "last_updated"
        }
    }

    struct IndependentAnswer: Encodable {
        var revision: Int64
        var articles: [IndependentArticle]
    }

    package struct FeedAnswer: Encodable {
        /// The store's revision: grows with every import and delete.
        var revision: Int64
        var packages: [PackageAnswer]

        package init(revision: Int64, packages: [PackageAnswer]) {
            self.revision = revision
            self.packages = packages
        }
    }

    static func withheld(_ package: StoredPackage) -> GalleyError {
        GalleyError("issue `\(package.appleID)` is kept out of the feed: \(package.withheld ?? "withheld")", id: .packageWithheld,
                    hint: "Pack its source again with this Galley and import the new zip.")
    }

    /// Where this server is, as apps reach it: `--public-url`; else what a `--trusted-proxy`
    /// forwards (`PublicOrigin.forwardedBase`); else `http://` and the address the connection
    /// reached. Never the `Host` as sent: a shared cache would hand links to `evil.example`
    /// to every reader.
    func baseURL(_ request: Request, _ context: ServeContext) -> String {
        if let publicURL { return publicURL }
        if trustedProxies.contains(context.remoteAddress), let forwarded = PublicOrigin.forwardedBase(request.headers) {
            return forwarded
        }
        return PublicOrigin.listening(context.localAddress)
    }

    /// A shared cache keeps a JSON answer `sharedMaxAge` seconds and may answer with it
    /// `staleWhileRevalidate` more while it asks again; a reader's own cache always asks
    /// (`max-age=0`), so an app revalidating on launch still gets its 304 or the new feed.
    package static func jsonCacheControl(sharedMaxAge: Int, staleWhileRevalidate: Int) -> String {
        guard sharedMaxAge > 0 else { return "no-cache" }
        return "public, max-age=0, s-maxage=\(sharedMaxAge)" + (staleWhileRevalidate > 0 ? ", stale-while-revalidate=\(staleWhileRevalidate)" : "")
    }

    package struct ListAnswer<Item: Encodable>: Encodable {
        var items: [Item]

        package init(items: [Item]) { self.items = items }
    }

    /// An asset as the API shows it: its `path` is its download address on this server named
    /// by its content (`/issues/{issue}/files/{sha256}/{name}`, cached for good), never where
    /// the store keeps the file (the operator's business, and no use to a client). Without a
    /// file row it is the name's address, which answers the 404 that says so.
    static func served(_ asset: StoredAsset) -> StoredAsset {
        var shown = asset
        let folder = "/issues/\(HTMLText.urlPath(asset.issueGlobalID))/files/"
        shown.path = folder + (asset.sha256.map { "\($0)/" } ?? "") + HTMLText.urlPath(asset.fileName)
        return shown
    }

    /// A page of a listing: its items, and the address of the next page (also sent as
    /// `Link: <...>; rel="next"`), null on the last.
    struct PageAnswer: Encodable {
        var items: [StoredArticle]
        @JSONNullable var next: String?

        /// The next page's address: this request's path and parameters with the new cursor
        /// (and no `page`: cursors replace offsets).
        init(_ page: ArticlePage, request: Request) {
            items = page.items
            next = page.next.map { cursor in
                var query: [String] = []
                for (key, value) in request.uri.queryParameters where key != "cursor" && key != "page" {
                    query.append("\(Self.escape(String(key)))=\(Self.escape(String(value)))")
                }
                query.append("cursor=\(cursor)")
                return request.uri.path + "?" + query.joined(separator: "&")
            }
        }

        static func escape(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
        }
    }

    struct SearchAnswer: Encodable {
        var query: String
        var items: [StoredArticle]
        @JSONNullable var rankedOnlyMostRecent: Int?

        enum CodingKeys: String, CodingKey {
            case query, items
            case rankedOnlyMostRecent = "ranked_only_most_recent"
        }
    }

    /// Articles per page when `limit` is not given.
    static let defaultLimit = 20

    /// A yes/no query parameter: `true` or `1`, `false` or `0`, or absent (no). Anything else is
    /// a 400 rather than a silent no (`featured=yes` listing every article).
    static func flag(_ request: Request, _ name: String) throws -> Bool {
        switch request.uri.queryParameters[Substring(name)] {
        case nil, "false", "0": return false
        case "true", "1": return true
        default: throw GalleyError("`\(name)` must be true or false", id: .usage, hint: "For example ?\(name)=true.")
        }
    }

    static func articleFilter(_ request: Request) throws -> ArticleFilter {
        let query = request.uri.queryParameters
        var filter = ArticleFilter()
        filter.type = query["type"].map(String.init)
        filter.excludeType = query["exclude_type"].map(String.init)
        filter.keyword = query["keyword"].map(String.init)
        filter.featured = try flag(request, "featured")
        switch query["order"] {
        case nil: filter.byDate = false
        case "date": filter.byDate = true
        case let other?: throw GalleyError("`order` is `\(other)`: the only order to ask for is `date`", id: .usage,
                                           hint: "Leave it out for the listing's own order, or give ?order=date.")
        }
        if let limit = query["limit"] {
            guard let value = Int(limit), (1...100).contains(value) else {
                throw GalleyError("`limit` must be a number from 1 to 100", id: .usage, hint: "For example ?limit=20.")
            }
            filter.limit = value
        }
        filter.limit = filter.limit ?? defaultLimit
        if let page = query["page"] {
            guard let value = Int(page), value >= 0, value <= 1_000_000 else {
                throw GalleyError("`page` must be from 0 to 1000000", id: .usage, hint: "Pages count from 0; the Link rel=\"next\" cursor is better.")
            }
            filter.page = value
        }
        if let cursor = query["cursor"] {
            guard query["page"] == nil else {
                throw GalleyError("give `cursor` or `page`, not both", id: .usage, hint: "Follow the Link rel=\"next\" address as given.")
            }
            filter.after = String(cursor)
        }
        return filter
    }

    // MARK: Answers

    /// A JSON resource: the version negotiated, a strong ETag from the store's revision and the
    /// request (so a revalidation costs one row read and no listing query), then the answer,
    /// made once per revision (`ResponseCache`).
    ///
    /// `signed` answers (the feed, a package) carry `Galley-Signature` when the server has a
    /// key; the signature's expiry moves every half lifetime, and with it the tag and the kept
    /// answer, so a client revalidating an unchanged feed gets a fresh signature in time.
    func resource(
        _ request: Request, version fixed: APIVersion?, _ context: ServeContext, signed: Bool = false, unbounded: Bool = false,
        _ answer: @escaping @Sendable (APIVersion) throws -> Representation
    ) async throws -> Response {
        let version: APIVersion
        if let fixed {
            version = fixed
        } else if let header = request.headers[Self.acceptVersion] {
            guard let asked = APIVersion(header: header) else {
                let supported = APIVersion.allCases.map(\.rawValue).joined(separator: ", ")
                return errorResponse(
                    GalleyError("no API version `\(header)`; this server speaks \(supported)", id: .usage,
                                hint: "Send Accept-Version: \(APIVersion.current.rawValue), or use a /v1 or /v2 path."),
                    status: .notAcceptable, version: nil)
            }
            version = asked
        } else {
            version = .current
        }
        do {
            let revision = try await storeCall { try self.store.recentRevision() }
            // Each representation is its own entry with its own strong tag: the gzip one differs
            // from the plain one, and (without --public-url) the feed's addresses name the origin.
            let gzip = Self.acceptsGzip(request.headers[.acceptEncoding])
            let base = publicURL == nil ? baseURL(request, context) : ""
            var key = "\(version.prefix)\u{1F}\(gzip ? "gz" : "")\u{1F}\(base)\u{1F}\(request.uri.description)"
            var sign: (@Sendable (ByteBufferView) -> String)?
            var signedPeriod: Int64?
            if signed, let signingKey {
                let (period, expires) = FeedSignature.expiry(at: Date(), ttl: signatureLifetime)
                key += "\u{1F}s\(period)"
                sign = { signingKey.header(for: $0, expires: expires) }
                signedPeriod = period
            }
            let kept = cache.entry(key, revision: revision)
            let tag = kept?.tag ?? "\"r\(revision)-\(version.prefix)-\(SHA256Hasher.hex(of: key).prefix(16))\(gzip ? "-gz" : "")\""
            // What the next request with these inputs is answered from (`Revalidator`): a 304
            // with this tag, or the 200 kept under `key`. Kept only once an answer was made for
            // them: a request the answer refuses (a bad parameter) is a 400 whatever its
            // `If-None-Match` says (RFC 9110 evaluates preconditions only for a 2xx).
            let inputs = request.method == .get ? Revalidator.key(request.head, base: base) : nil
            let proven = kept != nil || inputs.flatMap { cache.validator($0, revision: revision)?.tag } == tag
            func keepValidator() {
                guard let inputs, cache.validator(inputs, revision: revision)?.tag != tag else { return }
                let route = context.endpointPath ?? "unmatched"
                cache.keep(HTTPValidator(revision: revision, tag: tag, headers: validatorHeaders(version, tag: tag),
                                         counted: metrics.series(route: route, method: .get, status: .notModified),
                                         countedFull: metrics.series(route: route, method: .get, status: .ok),
                                         answerKey: key, period: signedPeriod), for: inputs)
            }
            let revalidated = Self.matches(request.headers[.ifNoneMatch], tag)
            if proven {
                keepValidator()
                if revalidated { return Response(status: .notModified, headers: validatorHeaders(version, tag: tag)) }
            }
            if let kept {
                return Response(status: .ok, headers: kept.headers, body: ResponseBody(byteBuffer: kept.body))
            }
            let (signer, folder, caching) = (sign, spoolFolder, jsonCacheControl)
            let made = try await storeCall(unbounded: unbounded) {
                let made = try Self.represent(try answer(version), version: version, tag: tag, gzip: gzip, cacheControl: caching,
                                              sign: signer, spoolFolder: folder)
                // A large answer's rows were read and freed on this thread, whose own malloc
                // heap keeps their pages (one heap per pool thread): they go back here.
                if case .file = made { FreedMemory.giveBack() }
                return made
            }
            keepValidator()
            switch made {
            case .bytes(let made):
                cache.store(made, for: key, revision: revision)
                if revalidated { return Response(status: .notModified, headers: validatorHeaders(version, tag: tag)) }
                return Response(status: .ok, headers: made.headers, body: ResponseBody(byteBuffer: made.body))
            case .file(let headers, let file):
                if revalidated { return Response(status: .notModified, headers: validatorHeaders(version, tag: tag)) }
                return Response(status: .ok, headers: headers, body: file.body(on: context.channel, limits: sending))
            }
        } catch {
            return failure(error, version: version)
        }
    }

    /// The headers a JSON resource's 200 and 304 share: its version, its tag, and how long
    /// caches may keep it (`jsonCacheControl`).
    func validatorHeaders(_ version: APIVersion, tag: String) -> HTTPFields {
        Self.validatorHeaders(version, tag: tag, cacheControl: jsonCacheControl)
    }

    static func validatorHeaders(_ version: APIVersion, tag: String, cacheControl: String) -> HTTPFields {
        var headers = Self.headers(version)
        headers[.eTag] = tag
        headers[.cacheControl] = cacheControl
        headers[.vary] = "Accept-Version, Accept-Encoding"
        return headers
    }

    /// A 200's headers and body: in memory (kept in the answer cache), or a large answer in its
    /// temporary file (`AnswerSpool`), never kept.
    enum Made: Sendable {
        case bytes(ResponseCache.Entry)
        case file(HTTPFields, SpoolFile)
    }

    /// An answer as the bytes and headers of a 200: JSON (or a page's HTML), gzipped when asked
    /// and worth it. A large answer (`JSONBody` spooled to a file) is gzipped file to file and is
    /// never signed: the routes that sign (the feed, a package) give answers their request bounds.
    static func represent(_ answer: Representation, version: APIVersion, tag: String, gzip: Bool, cacheControl: String = "no-cache",
                          sign: ((ByteBufferView) -> String)? = nil, spoolFolder: String? = nil) throws -> Made {
        var headers = validatorHeaders(version, tag: tag, cacheControl: cacheControl)
        var body: ByteBuffer
        switch answer {
        case .written(.file(let file)):
            guard sign == nil else {
                throw GalleyError("a signed answer is too large to sign", id: .storeFailed, hint: "Report this: signed answers are bounded.")
            }
            headers[.contentType] = Self.json
            if gzip, let compressed = try? AnswerSpool.gzipped(file, folder: spoolFolder) {
                headers[.contentEncoding] = "gzip"
                return .file(headers, compressed)
            }
            return .file(headers, file)
        case .written(.memory(let bytes)):
            body = bytes
            headers[.contentType] = Self.json
        case .page(let html):
            body = ByteBuffer(string: html)
            headers[.contentType] = "text/html; charset=utf-8"
            headers[.contentSecurityPolicy] = Self.pagePolicy
            headers[.xContentTypeOptions] = "nosniff"
        case .json(let value, let next):
            if let next { headers[Self.link] = "<\(next)>; rel=\"next\"" }
            body = ByteBuffer(string: JSONDocument.encode(AnyEncodable(value)))
            headers[.contentType] = Self.json
        }
        // Signed before compression: the signature covers the JSON a client reads.
        if let sign { headers[Self.signature] = sign(body.readableBytesView) }
        if gzip && body.readableBytes >= Self.gzipThreshold, let compressed = try? body.compress(with: .gzip()) {
            body = compressed
            headers[.contentEncoding] = "gzip"
        }
        return .bytes(ResponseCache.Entry(tag: tag, headers: headers, body: body))
    }

    /// Runs `body`, which asks the store, where the store allows: in place for a local store,
    /// on NIO's thread pool for one that waits on the network (never on an event loop), and
    /// for an answer whose size the request does not bound (`unbounded`: `/assets`,
    /// `/issues/{id}`), which a local store takes seconds to make for a large issue (the
    /// 60,001 assets of the benchmark's issue, 1.3 s): made in place, it held one of the
    /// server's event loops, and every connection on that loop, as long.
    func storeCall<T: Sendable>(unbounded: Bool = false, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        guard store.waitsOnNetwork || unbounded else { return try body() }
        return try await NIOThreadPool.singleton.runIfActive(body)
    }

    /// `/healthz`'s body when the store answers.
    static func healthText(_ revision: Int64) -> String { "{\"revision\": \(revision), \"status\": \"ok\"}\n" }

    func health() async -> Response {
        do {
            let revision = try await storeCall { try self.store.revision() }
            let text = Self.healthText(revision)
            return Response(status: .ok, headers: [.contentType: Self.json, .cacheControl: "no-store"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        } catch {
            return errorResponse(Self.galleyError(error), status: .serviceUnavailable, version: nil)
        }
    }

    static func headers(_ version: APIVersion) -> HTTPFields {
        var headers: HTTPFields = [contentVersion: version.rawValue]
        if version.isRetired {
            headers[deprecation] = APIVersion.deprecation
            headers[sunset] = APIVersion.sunset
        }
        return headers
    }

    /// JSON shorter than this goes plain: gzip would save less than its own header costs.
    static let gzipThreshold = 860

    /// Whether `Accept-Encoding` takes gzip (`gzip`, `x-gzip` or `*`, with a q above 0).
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = parts.first, ["gzip", "x-gzip", "*"].contains(coding) else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return q > 0
        }
        return false
    }

    /// Whether `If-None-Match` names `tag` (or is `*`).
    static func matches(_ header: String?, _ tag: String) -> Bool {
        guard let header else { return false }
        // Every revalidation comes here: bytes compared in place, no strings made (the
        // Foundation version of this was 5% of a 304's CPU).
        if header == tag { return true }
        let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")
        for item in header.utf8.split(separator: UInt8(ascii: ",")) {
            var candidate = item[...]
            while let first = candidate.first, first == space || first == tab { candidate.removeFirst() }
            while let last = candidate.last, last == space || last == tab { candidate.removeLast() }
            if candidate.elementsEqual("*".utf8) || candidate.elementsEqual(tag.utf8) { return true }
            if candidate.starts(with: "W/".utf8) && candidate.dropFirst(2).elementsEqual(tag.utf8) { return true }
        }
        return false
    }

    /// Any failure as the one error shape: a `GalleyError` as it is, anything else (a database
    /// error) as `store.failed`, never Hummingbird's plain-text 500.
    static func galleyError(_ error: any Error) -> GalleyError {
        error as? GalleyError ?? GalleyError("the store failed: \(error)", id: .storeFailed,
                                             hint: "`galley store check` tells what is wrong with it.")
    }

    /// The hint a client of this server can act on. The store's hints name `galley` commands
    /// and options, which an app or a script talking HTTP cannot run: a lookup's says which
    /// route lists what there is, a server failure's only that it is the server's.
    static func clientHint(_ error: GalleyError, status: HTTPResponse.Status) -> String? {
        switch error.missing {
        case .issue: return "GET /issues lists them."
        case .article: return "GET /articles lists them (?issue=APPLE_ID those of one issue)."
        case .articleInSeveralIssues(let id): return "Name the issue: /articles/\(HTMLText.urlPath(id))?issue=APPLE_ID."
        case .file(let issue, _): return "GET /assets?issue=\(HTMLText.urlPath(issue)) lists its files."
        case nil: break
        }
        if status.code >= 500 { return "The server could not answer from its store: try again later; its log says what failed." }
        return error.hint
    }

    static func status(for error: GalleyError) -> HTTPResponse.Status {
        switch error.id {
        case .notFound, .packageWithheld: .notFound
        case .inputNotFound, .inputKind, .inputUnreadable, .problems: .unprocessableContent
        case .usage: .badRequest
        case .authRequired: .unauthorized
        case .writesOff: .forbidden
        case .uploadTooLarge: .contentTooLarge
        case .storeMissing: .serviceUnavailable
        default: .internalServerError
        }
    }

    /// Any failure, in the one error shape with the status its id calls for: a zip the import
    /// gate refused is 422 with its findings, as `galley import --json` gives them.
    func failure(_ error: any Error, version: APIVersion?) -> Response {
        if let refused = error as? DiagnosticsError {
            var headers = Self.headers(version ?? .current)
            headers[.contentType] = Self.json
            headers[.cacheControl] = "no-store"
            let document = ErrorDocument(problems: refused.diagnostics, message: "the zip was refused: nothing was imported",
                                         hint: "Each finding names its place in the zip; mend them, pack again and upload the new zip.")
            return Response(status: .unprocessableContent, headers: headers,
                            body: ResponseBody(byteBuffer: ByteBuffer(string: JSONDocument.encode(document))))
        }
        let known = Self.galleyError(error)
        return errorResponse(known, status: Self.status(for: known), version: version)
    }

    /// Errors in the scripts' contract's one shape: `{"schema_version", "error": {"id", ...}}`.
    func errorResponse(_ error: GalleyError, status: HTTPResponse.Status, version: APIVersion?) -> Response {
        var shown = error
        // The store's folder is the operator's business, not the client's.
        if shown.path == store.root.path { shown.path = nil }
        if status.code >= 500 {
            // What failed and how to mend it is the operator's to read, in the log.
            logger.error("\(status.code) \(error.id.rawValue): \(error.description)\(error.hint.map { " (\($0))" } ?? "")")
        }
        shown.hint = Self.clientHint(error, status: status)
        var headers = version.map(Self.headers) ?? [:]
        headers[.contentType] = Self.json
        headers[.cacheControl] = "no-store"
        if error.id == .authRequired { headers[.wwwAuthenticate] = "Bearer realm=\"galley\"" }
        return Response(status: status, headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(string: JSONDocument.encode(ErrorDocument(shown)))))
    }
}

/// A JSON document a route writes itself (`JSONDocument.streamList`) as the store reads its
/// rows; `represent` sends its bytes as they are (`Representation.written`).
struct JSONBody {
    var content: AnswerSpool.Content

    /// The document `streamList` writes of `produce`'s items (and `trailing`'s members), written
    /// into an `AnswerSpool` as the store reads the rows (see `init(memoryLimit:folder:_:)`); a
    /// spool that cannot write (a full disk) stops the rows being read.
    init<Item: Encodable>(
        key: String, memoryLimit: Int, folder: String? = nil, trailing: () -> [(key: String, value: any Encodable)] = { [] },
        _ produce: ((Item) throws -> Void) throws -> Void
    ) throws {
        try self.init(memoryLimit: memoryLimit, folder: folder) { spool in
            try JSONDocument.streamList(key: key, trailing: trailing, write: { spool.write($0) }) { (send: (Item) throws -> Void) in
                try withoutActuallyEscaping(send) { send in
                    try produce { item in
                        if let failure = spool.failure { throw failure }
                        try send(item)
                    }
                }
            }
        }
    }

    /// The document `document` writes into an `AnswerSpool`: in memory up to `memoryLimit` bytes,
    /// past that in a temporary file (in `folder`, nil: `TMPDIR`). A document ended by an error
    /// (`JSONDocument.ListEndedByError`) is thrown as the error alone: nothing was sent yet, so
    /// the answer is the error document.
    init(memoryLimit: Int, folder: String? = nil, _ document: (AnswerSpool) throws -> Void) throws {
        let spool = AnswerSpool(memoryLimit: memoryLimit, folder: folder)
        do {
            try document(spool)
        } catch let ended as JSONDocument.ListEndedByError {
            throw ended.error
        }
        content = try spool.finish()
    }
}


extension GalleyServer {
    /// Runs the process's Swift tasks on the server's event loops (NIO's singleton group, which
    /// Hummingbird serves on) instead of a second pool of threads: a request's handler then runs
    /// where its connection's bytes arrive, without a hop between pools and back for every
    /// request. Call once, before the server's first task; false when the runtime does not let it.
    public static func runTasksOnEventLoops() -> Bool {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }

    /// Serves until SIGINT or SIGTERM, letting requests in flight finish. `onListening` gets the
    /// bound port (useful with port 0).
    public func run(_ options: ServeOptions, onListening: @escaping @Sendable (Int) -> Void) async throws {
        // The idle timeout is kept by `RevalidationHandler`, which sees every request.
        let idleTimeout = TimeAmount.seconds(options.idleTimeout)
        let configuration = HTTP1Channel.Configuration(
            idleTimeout: nil,
            // Far below NIO's 80 KiB: an API request needs a few hundred bytes of headers.
            httpDecoderConfiguration: .init(maxHeaderFieldSize: 8 * 1024, maxHeaderListSize: 16 * 1024, maxHeaderFieldCount: 100))
        if writes != nil {
            let removed = removeDeadUploads()
            if removed > 0 { logger.notice("removed \(removed) upload folder\(removed == 1 ? "" : "s") a stopped server left in \(uploadsFolder.path)") }
        }
        let serverName = "galley"
        let revalidator = Revalidator(store: store, cache: cache, keysOrigin: publicURL == nil,
                                      forwardedMatters: publicURL == nil && !trustedProxies.isEmpty, signatureLifetime: signatureLifetime,
                                      logger: logger, serverName: serverName,
                                      healthSeries: metrics.series(route: "/healthz", method: .get, status: .ok))
        let app = Application(
            router: router(),
            server: HTTPServerBuilder { responder in
                RevalidatingHTTP1Channel(inner: HTTP1Channel(responder: responder, configuration: configuration), revalidator: revalidator,
                                         idleTimeout: idleTimeout, gate: gate)
            },
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: serverName),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? options.port) },
            logger: logger)
        try await app.runService()
    }
}
