import CompressNIO
import Foundation
import GalleyTestSupport
import GalleyCore
import GalleyFormats
import GalleyKit
@testable import GalleyServe
import GalleyStore
import GalleyStoreSQLite
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// `galley serve`'s routes in process (Hummingbird's router test client), on a real store with
/// the example issue imported. The first tests port the Grails seed's functional tests.
@Suite struct ServeRouterTests {
    let store: SQLiteStore
    let appleID = "com.example.harbour.2026-01"

    static let example = TestFiles.example

    init() throws {
        store = try Self.exampleStore("galley-serve")
    }

    /// A new store (in a scratch folder named from `prefix`) holding the example issue.
    static func exampleStore(_ prefix: String) throws -> SQLiteStore {
        ProcessEnvironment.configureForArchives()
        let root = Scratch.path(prefix)
        let store = try SQLiteStore(at: root.appending(path: "store"), access: .create)
        try importPacked(example, into: store, scratch: root)
        return store
    }

    /// Packs the issue source `source` into `scratch` and imports the zip into `store`.
    static func importPacked(_ source: URL, into store: SQLiteStore, scratch: URL) throws {
        let summary = try Packer().pack(PackOptions(source: source, output: scratch.appending(path: "dist/")))
        _ = try store.importZip(summary.path, force: false)
    }

    func test(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let app = Application(router: GalleyServer(store: store).router())
        try await app.test(.router, body)
    }

    static func errorID(_ response: TestResponse) throws -> String? {
        (try json(response)["error"] as? [String: Any])?["id"] as? String
    }

    static func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
    }

    @Test func version1ListsCarryBodiesAndVersion2ListsDoNot() async throws {
        try await test { client in
            for (header, bodies) in [("1.0", true), ("2.0", false)] {
                try await client.execute(uri: "/issues/\(appleID)/articles", method: .get,
                                         headers: [HTTPField.Name("Accept-Version")!: header]) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "application/json;charset=UTF-8")
                    #expect(response.headers[HTTPField.Name("Content-Version")!] == header)
                    let items = try #require(try Self.json(response)["items"] as? [[String: Any]])
                    #expect(items.count == 4)
                    for item in items {
                        #expect(item["global_id"] is String && item["title"] is String)
                        #expect((item["body"] is String) == bodies, "version \(header)")
                    }
                    #expect((response.headers[HTTPField.Name("Deprecation")!] != nil) == (header == "1.0"))
                    #expect((response.headers[HTTPField.Name("Sunset")!] != nil) == (header == "1.0"))
                }
            }
            // The paths say the same as the header, and the detail endpoint has the body in both.
            try await client.execute(uri: "/v1/articles?issue=\(appleID)&limit=2", method: .get) { response in
                let items = try #require(try Self.json(response)["items"] as? [[String: Any]])
                #expect(items.count == 2 && items.allSatisfy { $0["body"] is String })
                #expect(response.headers[HTTPField.Name("Content-Version")!] == "1.0")
            }
            let first = try await client.execute(uri: "/v2/issues/\(appleID)", method: .get) { response in
                let articles = try #require(try Self.json(response)["articles"] as? [[String: Any]])
                #expect(articles.allSatisfy { $0["body"] == nil })
                return try #require(articles.first?["global_id"] as? String)
            }
            // Written as the store reads the rows, an issue's answer is the document of the issue
            // and its whole list, by either id, in both versions.
            struct IssueDocument: Encodable {
                var issue: StoredIssue
                var articles: [StoredArticle]
            }
            for (prefix, bodies) in [("/v1", true), ("/v2", false)] {
                var filter = ArticleFilter(issue: appleID)
                filter.withBodies = bodies
                let whole = JSONDocument.encode(IssueDocument(issue: try store.issueSummary(appleID), articles: try store.articles(filter)))
                for id in [appleID, try store.issueSummary(appleID).globalID] {
                    try await client.execute(uri: "\(prefix)/issues/\(id)", method: .get) { response in
                        #expect(response.status == .ok)
                        #expect(String(buffer: response.body) == whole, "\(prefix)/issues/\(id)")
                    }
                }
            }
            for prefix in ["/v1", "/v2"] {
                try await client.execute(uri: "\(prefix)/articles/\(first)", method: .get) { response in
                    #expect(response.status == .ok)
                    let detail = try Self.json(response)
                    #expect(detail["body"] is String)
                }
            }
        }
    }

    /// The name of the thread this runs on, as Linux keeps it (NIO names its singleton thread
    /// pool's `SGLTN-TP-#<n>`).
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
    }

    /// An answer the request does not bound (`/assets`, `/issues/{id}`) is made on NIO's thread
    /// pool, never on the event loop that serves the connection; the others, from a local
    /// store, in place.
    @Test func unboundedAnswersAreMadeOnTheThreadPool() async throws {
        let server = GalleyServer(store: store)
        let pooled = try await server.storeCall(unbounded: true) { Self.threadName() }
        #expect(pooled.contains("TP-#"), "\(pooled)")
        let inPlace = try await server.storeCall { Self.threadName() }
        #expect(!inPlace.isEmpty && !inPlace.contains("TP-#"), "\(inPlace)")
    }

    /// `/issues/{id}` and `/assets` past the answer cache's largest entry are written to a
    /// temporary file and sent from it (`AnswerSpool`): the same bytes as an answer made in
    /// memory, plain and gzipped, with their length, and never kept in the cache.
    @Test func largeAnswersComeFromATemporaryFileWithTheSameBytes() async throws {
        let small = ResponseCache(capacity: 8 * 1024)
        let spooling = GalleyServer(store: store, options: ServeOptions(), cache: small)
        for uri in ["/v1/issues/\(appleID)", "/v2/issues/\(appleID)", "/v1/assets"] {
            let inMemory = try await Application(router: GalleyServer(store: store).router()).test(.router) { client in
                try await client.execute(uri: uri, method: .get) { Data(buffer: $0.body) }
            }
            #expect(inMemory.count > 1024, "\(uri) is too small to be spooled: \(inMemory.count) bytes")
            try await Application(router: spooling.router()).test(.router) { client in
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentLength] == String(inMemory.count))
                    #expect(response.headers[.contentType] == GalleyServer.json)
                    #expect(response.headers[.eTag] != nil)
                    #expect(Data(buffer: response.body) == inMemory, "\(uri)")
                }
                try await client.execute(uri: uri, method: .get, headers: [.acceptEncoding: "gzip"]) { response in
                    #expect(response.headers[.contentEncoding] == "gzip")
                    var body = response.body
                    #expect(response.headers[.contentLength] == String(body.readableBytes))
                    let inflated = try body.decompress(with: .gzip())
                    #expect(Data(buffer: inflated) == inMemory, "\(uri)")
                }
            }
        }
        #expect(small.size == 0, "a spooled answer was kept in the cache")
        // Where the file cannot be made, the large answer is a 500 in the one error shape (and
        // so proves it went through the spool); the small ones are answered from memory.
        let missing = Scratch.path("galley-spool-missing").path
        let failing = GalleyServer(store: store, options: ServeOptions(), cache: ResponseCache(capacity: 8 * 1024), spoolFolder: missing)
        try await Application(router: failing.router()).test(.router) { client in
            try await client.execute(uri: "/v1/issues/\(appleID)", method: .get) { response in
                #expect(response.status == .internalServerError)
                let id = try Self.errorID(response)
                #expect(id == "store.failed")
                #expect(!String(buffer: response.body).contains(missing), "the server's folders are not the client's business")
            }
            try await client.execute(uri: "/v1/issues", method: .get) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test func anUnknownVersionIs406NamingTheSupportedOnes() async throws {
        try await test { client in
            try await client.execute(uri: "/issues", method: .get, headers: [HTTPField.Name("Accept-Version")!: "3.0"]) { response in
                #expect(response.status == .notAcceptable)
                let error = try #require(try Self.json(response)["error"] as? [String: Any])
                #expect(error["id"] as? String == "usage")
                #expect((error["message"] as? String)?.contains("1.0, 2.0") == true)
            }
        }
    }

    @Test func aRevalidationIs304UntilTheStoreChanges() async throws {
        try await test { client in
            let tag = try await client.execute(uri: "/issues", method: .get) { response in
                try #require(response.headers[.eTag])
            }
            #expect(tag.hasPrefix("\"") && !tag.hasPrefix("W/"), "a strong ETag")
            try await client.execute(uri: "/issues", method: .get, headers: [.ifNoneMatch: tag]) { response in
                #expect(response.status == .notModified)
                #expect(response.body.readableBytes == 0)
            }
            // Another resource, or another version, has another tag.
            try await client.execute(uri: "/v1/issues", method: .get, headers: [.ifNoneMatch: tag]) { response in
                #expect(response.status == .ok)
            }
            _ = try store.delete(appleID)
            try await client.execute(uri: "/issues", method: .get, headers: [.ifNoneMatch: tag]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.eTag] != tag)
                let items = try Self.json(response)["items"] as? [Any]
                #expect(items?.isEmpty == true)
            }
        }
    }

    /// Dumpling's issue and asset queries (`Issue`'s newer/older, `Asset`'s playlist, first
    /// asset and count), as `galley issues` and `galley assets` answer them; an asset's `path`
    /// is where this server serves its file, never the store's folder.
    @Test func issuesBeforeAndAfterOneAndTheAssetQueries() async throws {
        // A February issue beside the example's January one.
        let root = Scratch.path("galley-serve-february")
        let source = root.appending(path: "winter-2026")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.example, to: source)
        let yaml = source.appending(path: "issue.yaml")
        let text = try String(contentsOf: yaml, encoding: .utf8)
            .replacingOccurrences(of: "apple_id: com.example.harbour.2026-01", with: "apple_id: com.example.harbour.2026-02")
            .replacingOccurrences(of: "publish_date: 2026-01-05", with: "publish_date: 2026-02-02")
        try Data(text.utf8).write(to: yaml)
        try Self.importPacked(source, into: store, scratch: root)
        let february = "com.example.harbour.2026-02"
        try await test { client in
            func items(_ uri: String) async throws -> [[String: Any]] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .ok, "\(uri)")
                    return try #require(try Self.json(response)["items"] as? [[String: Any]], "\(uri)")
                }
            }
            func appleIDs(_ uri: String) async throws -> [String] {
                try await items(uri).compactMap { $0["apple_id"] as? String }
            }
            #expect(try await appleIDs("/issues") == [february, appleID])
            #expect(try await appleIDs("/issues?older_than=\(february)") == [appleID])
            #expect(try await appleIDs("/issues?newer_than=\(appleID)") == [february])
            #expect(try await appleIDs("/issues?newer_than=\(february)").isEmpty)

            let issueAssets = try await items("/assets?issue=\(appleID)")
            #expect(issueAssets.count == 8)
            let issueID = try #require(issueAssets.first?["issue_global_id"] as? String)
            // Each asset's address is named by its content: /issues/{id}/files/{sha256}/{name}.
            for asset in issueAssets {
                let path = try #require(asset["path"] as? String)
                let parts = path.split(separator: "/")
                #expect(parts.count == 5 && parts[0] == "issues" && parts[1] == issueID && parts[2] == "files", "\(path)")
                #expect(parts.count == 5 && parts[3].count == 64 && parts[3].allSatisfy(\.isHexDigit), "\(path)")
                #expect(parts.last.map(String.init) == asset["file_name"] as? String)
            }
            // Written as the store reads the rows, the answer is the document of the whole list.
            for uri in ["/assets", "/assets?issue=\(appleID)", "/assets?kind=video"] {
                let filter = uri == "/assets" ? AssetFilter() : uri.hasSuffix("video") ? AssetFilter(kind: .video) : AssetFilter(issue: appleID)
                let whole = JSONDocument.encode(GalleyServer.ListAnswer(items: try store.assets(filter).map(GalleyServer.served)))
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(String(buffer: response.body) == whole, "\(uri)")
                    #expect(response.headers[.contentType] == GalleyServer.json)
                }
            }
            let cover = try await items("/assets?issue=\(appleID)&cover=true")
            #expect(cover.map { $0["file_name"] as? String } == ["cover.jpg"])
            #expect(cover.first?["article_global_id"] is NSNull, "the issue's own image, not an article's")
            let ferry = "5f827f80262d6fe87d41ca17"
            let playlist = try await items("/assets?article=\(ferry)&playlist=true")
            #expect(playlist.map { $0["file_name"] as? String } == ["night-ferry-interview.mp3"])
            #expect(try await items("/assets?article=\(ferry)&kind=sound&playlist=1").count == 1)
            let first = try await items("/assets?article=fbf92e3a2aa69e50f4c7b6e7&first=true")
            #expect(first.map { $0["file_name"] as? String } == ["the-lighthouse-keepers-lamp-room.jpg"])
            try await client.execute(uri: "/assets?issue=\(appleID)&count=true", method: .get) { response in
                let document = try Self.json(response)
                #expect(document["count"] as? Int == 8 && document["items"] == nil)
            }
            try await client.execute(uri: "/assets?article=\(ferry)&playlist=true&count=true", method: .get) { response in
                let count = try Self.json(response)["count"] as? Int
                #expect(count == 1)
            }
            // An article's detail shows the same addresses, and they serve the files.
            let detail = try await client.execute(uri: "/articles/\(ferry)", method: .get) { response in
                try #require(try Self.json(response)["assets"] as? [[String: Any]])
            }
            #expect(!detail.isEmpty)
            for asset in detail {
                let path = try #require(asset["path"] as? String)
                #expect(path.hasPrefix("/issues/\(issueID)/files/"))
                try await client.execute(uri: path, method: .head) { response in
                    #expect(response.status == .ok, "\(path)")
                }
            }
        }
    }

    @Test func unknownIdsAndBadParametersAreErrorsInTheOneShape() async throws {
        try await test { client in
            for (uri, status, id) in [
                ("/issues/nope", HTTPResponse.Status.notFound, "id.not-found"),
                ("/articles/nope", .notFound, "id.not-found"),
                ("/articles/nope/page", .notFound, "id.not-found"),
                ("/issues/nope/files/cover.jpg", .notFound, "id.not-found"),
                ("/issues/\(appleID)/files/nope.jpg", .notFound, "id.not-found"),
                ("/issues/nope/articles", .notFound, "id.not-found"),
                ("/articles?limit=1000", .badRequest, "usage"),
                ("/search", .badRequest, "usage"),
                ("/assets?kind=pdf", .badRequest, "usage"),
                ("/assets?first=maybe", .badRequest, "usage"),
                ("/articles?featured=yes", .badRequest, "usage"),
                ("/assets?playlist=true&kind=image", .badRequest, "usage"),
                ("/assets?cover=true", .badRequest, "usage"),
                ("/assets?article=5f827f80262d6fe87d41ca17&cover=true", .badRequest, "usage"),
                ("/issues?older_than=nope", .notFound, "id.not-found"),
                ("/issues?older_than=\(appleID)&newer_than=\(appleID)", .badRequest, "usage"),
            ] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == status, "\(uri)")
                    let error = try #require(try Self.json(response)["error"] as? [String: Any])
                    #expect(error["id"] as? String == id, "\(uri)")
                    #expect(!(error["message"] as? String ?? "").isEmpty)
                    // A client talks HTTP: no hint sends it to a command or an option it cannot run.
                    let hint = error["hint"] as? String ?? ""
                    #expect(!hint.contains("galley ") && !hint.contains("--"), "\(uri): \(hint)")
                }
            }
            try await client.execute(uri: "/search?q=lighthouse", method: .get) { response in
                #expect(response.status == .ok)
                let items = try Self.json(response)["items"] as? [Any]
                #expect(items?.isEmpty == false)
            }
        }
    }

    @Test func filesDownloadWithRangesAndStrongETags() async throws {
        let file = try store.file("cover.jpg", issue: appleID)
        let whole = try Data(contentsOf: URL(fileURLWithPath: file.path))
        try await test { client in
            let uri = "/issues/\(appleID)/files/cover.jpg"
            try await client.execute(uri: uri, method: .get) { response in
                #expect(response.status == .ok)
                #expect(Data(buffer: response.body) == whole)
                #expect(response.headers[.eTag] == "\"\(file.sha256)\"")
                #expect(response.headers[.contentType] == "image/jpeg")
                #expect(response.headers[.acceptRanges] == "bytes")
                #expect(response.headers[.lastModified] == "Sun, 04 Jan 2026 18:30:00 GMT")
            }
            // A resumed download: only the missing bytes, while If-Range still names this file.
            let half = whole.count / 2
            try await client.execute(uri: uri, method: .get,
                                     headers: [.range: "bytes=\(half)-", .ifRange: "\"\(file.sha256)\""]) { response in
                #expect(response.status == .partialContent)
                #expect(response.headers[.contentRange] == "bytes \(half)-\(whole.count - 1)/\(whole.count)")
                #expect(Data(buffer: response.body) == whole[half...])
            }
            try await client.execute(uri: uri, method: .get, headers: [.range: "bytes=-10"]) { response in
                #expect(Data(buffer: response.body) == whole.suffix(10))
            }
            // The file changed since (another validator): the whole file again.
            try await client.execute(uri: uri, method: .get, headers: [.range: "bytes=10-", .ifRange: "\"stale\""]) { response in
                #expect(response.status == .ok)
                #expect(response.body.readableBytes == whole.count)
            }
            try await client.execute(uri: uri, method: .get, headers: [.range: "bytes=\(whole.count)-"]) { response in
                #expect(response.status == .rangeNotSatisfiable)
                #expect(response.headers[.contentRange] == "bytes */\(whole.count)")
            }
            try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: "\"\(file.sha256)\""]) { response in
                #expect(response.status == .notModified)
            }
            try await client.execute(uri: uri, method: .head) { response in
                #expect(response.status == .ok)
                #expect(response.body.readableBytes == 0)
                #expect(response.headers[.contentLength] == String(whole.count))
            }
        }
    }

    /// Only a content-addressed URL is cached for good: a file by name can change behind its
    /// URL (a re-import), so caches revalidate it; by its SHA-256 it is immutable, and a digest
    /// that is no longer the file's is a 404. `If-Modified-Since` is honoured where
    /// `Last-Modified` is sent, and a date in `If-Range` resumes as the tag does.
    @Test func namedFilesRevalidateAndContentAddressedOnesAreImmutable() async throws {
        let file = try store.file("cover.jpg", issue: appleID)
        try await test { client in
            let named = "/issues/\(appleID)/files/cover.jpg"
            let addressed = "/issues/\(appleID)/files/\(file.sha256)/cover.jpg"
            try await client.execute(uri: named, method: .get) { response in
                #expect(response.headers[.cacheControl] == "public, no-cache")
            }
            try await client.execute(uri: addressed, method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.body.readableBytes == Int(file.size))
                #expect(response.headers[.cacheControl] == "public, max-age=31536000, immutable")
                #expect(response.headers[.eTag] == "\"\(file.sha256)\"")
            }
            let stale = "/issues/\(appleID)/files/\(String(repeating: "0", count: 64))/cover.jpg"
            try await client.execute(uri: stale, method: .get) { response in
                #expect(response.status == .notFound)
                let id = try Self.errorID(response)
                #expect(id == "id.not-found")
            }
            let modified = "Sun, 04 Jan 2026 18:30:00 GMT"
            for (since, status) in [(modified, HTTPResponse.Status.notModified), ("Mon, 05 Jan 2026 00:00:00 GMT", .notModified),
                                    ("Sat, 03 Jan 2026 00:00:00 GMT", .ok), ("yesterday", .ok)] {
                try await client.execute(uri: named, method: .get, headers: [.ifModifiedSince: since]) { response in
                    #expect(response.status == status, "\(since)")
                }
            }
            // If-None-Match wins over If-Modified-Since (RFC 9110, section 13.2.2).
            try await client.execute(uri: named, method: .get, headers: [.ifModifiedSince: modified, .ifNoneMatch: "\"other\""]) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: named, method: .get, headers: [.range: "bytes=10-", .ifRange: modified]) { response in
                #expect(response.status == .partialContent)
            }
        }
    }

    /// JSON answers may be kept by shared caches briefly (`s-maxage`, `stale-while-revalidate`)
    /// and are always revalidated by a reader's own (`max-age=0`); the 304 says the same.
    @Test func jsonAnswersTellSharedCachesHowLongToKeepThem() async throws {
        var options = ServeOptions()
        options.sharedMaxAge = 30
        options.staleWhileRevalidate = 90
        let app = Application(router: GalleyServer(store: store, options: options).router())
        try await app.test(.router) { client in
            let expected = "public, max-age=0, s-maxage=30, stale-while-revalidate=90"
            let tag = try await client.execute(uri: "/feed", method: .get) { response in
                #expect(response.headers[.cacheControl] == expected)
                return try #require(response.headers[.eTag])
            }
            try await client.execute(uri: "/feed", method: .get, headers: [.ifNoneMatch: tag]) { response in
                #expect(response.status == .notModified)
                #expect(response.headers[.cacheControl] == expected)
            }
        }
        #expect(GalleyServer.jsonCacheControl(sharedMaxAge: 0, staleWhileRevalidate: 90) == "no-cache")
    }

    /// HTTP as clients expect it: HEAD wherever GET is (uptime checks), 405 with `Allow` for a
    /// method the path does not take, a route that does not exist in the one error shape, and
    /// RFC 9112's Host rule (none, or two, is a 400).
    @Test func headEverywhereWrongMethodsAndMissesInTheOneShape() async throws {
        try await test { client in
            for uri in ["/healthz", "/feed", "/v2/issues", "/issues/\(appleID)", "/metrics", "/openapi.yaml"] {
                let length = try await client.execute(uri: uri, method: .get) { $0.body.readableBytes }
                try await client.execute(uri: uri, method: .head) { response in
                    #expect(response.status == .ok, "\(uri)")
                    #expect(response.body.readableBytes == 0, "\(uri)")
                    if uri != "/metrics" { #expect(response.headers[.contentLength] == String(length), "\(uri)") }
                }
            }
            for (uri, method, allow) in [("/feed", HTTPRequest.Method.post, "GET, HEAD"), ("/healthz", .delete, "GET, HEAD"),
                                         ("/v2/issues", .put, "GET, HEAD, POST"), ("/issues", .trace, "GET, HEAD, POST"),
                                         ("/issues/\(appleID)", .patch, "DELETE, GET, HEAD")] {
                try await client.execute(uri: uri, method: method) { response in
                    #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                    #expect(response.headers[.allow] == allow, "\(method) \(uri)")
                    let id = try Self.errorID(response)
                #expect(id == "usage")
                }
            }
            try await client.execute(uri: "/no/such/route", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == GalleyServer.json)
                let id = try Self.errorID(response)
                #expect(id == "id.not-found")
            }
            try await client.execute(uri: "/feed", method: .get, headers: [HTTPField.Name("Host")!: "second.example"]) { response in
                #expect(response.status == .badRequest)
                let id = try Self.errorID(response)
                #expect(id == "usage")
            }
        }
    }

    /// The example issue under another apple_id and publish date, packed.
    static func variant(of example: URL, appleID: String, published: String, in folder: URL) throws -> String {
        let source = folder.appending(path: "source-\(appleID)")
        try FileManager.default.copyItem(at: example, to: source)
        let yaml = source.appending(path: "issue.yaml")
        let text = try String(contentsOf: yaml, encoding: .utf8)
            .replacingOccurrences(of: "apple_id: com.example.harbour.2026-01", with: "apple_id: \(appleID)")
            .replacingOccurrences(of: "publish_date: 2026-01-05", with: "publish_date: \(published)")
        try text.write(to: yaml, atomically: true, encoding: .utf8)
        var options = PackOptions(source: source, output: folder.appending(path: "dist-\(appleID)/"))
        options.thumbnails = .none
        return try Packer().pack(options).path
    }

    /// Keyset paging: following Link rel="next" while an issue is imported between two pages
    /// (one that sorts before the cursor, one after) lists every article once, in order, with
    /// no duplicate and no gap; offsets would have shifted.
    @Test func cursorsShowNoDuplicateOrGapWhenAnIssueArrivesMidListing() async throws {
        let folder = Scratch.path("galley-serve-cursor")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Examples/winter-2026")
        _ = try store.importZip(try Self.variant(of: example, appleID: "com.example.harbour.2025-12", published: "2025-12-05", in: folder), force: false)
        let newer = try Self.variant(of: example, appleID: "com.example.harbour.2026-02", published: "2026-02-05", in: folder)
        let older = try Self.variant(of: example, appleID: "com.example.harbour.2025-11", published: "2025-11-05", in: folder)
        let before = try store.articles(ArticleFilter()).map { "\($0.issueGlobalID)/\($0.globalID)" }
        #expect(before.count == 8)
        try await test { client in
            for order in ["", "&order=date"] {
                var seen: [String] = []
                var uri: String? = "/articles?limit=3\(order)"
                var pages = 0
                while let next = uri {
                    uri = try await client.execute(uri: next, method: .get) { response in
                        #expect(response.status == .ok)
                        let answer = try Self.json(response)
                        let items = try #require(answer["items"] as? [[String: Any]])
                        seen += items.compactMap { item in
                            guard let issue = item["issue_global_id"] as? String, let id = item["global_id"] as? String else { return nil }
                            return "\(issue)/\(id)"
                        }
                        let link = response.headers[HTTPField.Name("Link")!]
                        let next = answer["next"] as? String
                        #expect(link == next.map { "<\($0)>; rel=\"next\"" })
                        return next
                    }
                    pages += 1
                    if pages == 1 && order.isEmpty {
                        _ = try store.importZip(newer, force: false)
                        _ = try store.importZip(older, force: false)
                    }
                    #expect(pages < 20)
                    if pages >= 20 { break }
                }
                if order.isEmpty {
                    // The newer issue sorts before the cursor: not seen; the older one after: all of it.
                    let olderIssue = try store.issueSummary("com.example.harbour.2025-11").globalID
                    #expect(seen == before + seen.filter { $0.hasPrefix(olderIssue) })
                    #expect(seen.filter { $0.hasPrefix(olderIssue) }.count == 4)
                } else {
                    #expect(Set(seen).count == seen.count && seen.count == 16)
                }
            }
            for bad in ["/articles?cursor=forged", "/articles?cursor=i.\(String(repeating: "A", count: 3000))",
                        "/articles?cursor=i.AAAA&page=1", "/articles?order=date&cursor=i.czIwMjYtMDEtMDUfYx8x"] {
                try await client.execute(uri: bad, method: .get) { response in
                    #expect(response.status == .badRequest, "\(bad)")
                }
            }
        }
    }

    /// gzip when asked (and worth it), with its own strong tag; CORS for the configured origin,
    /// exposing the validators, paging and version headers; /metrics counting by route.
    @Test func gzipCORSAndMetrics() async throws {
        var options = ServeOptions()
        options.corsOrigins = ["https://reader.example.com", "https://app.example.com"]
        let server = GalleyServer(store: store, options: options)
        try await Application(router: server.router()).test(.router) { client in
            let plain = try await client.execute(uri: "/v1/articles", method: .get) { response in
                #expect(response.headers[.contentEncoding] == nil)
                #expect(response.headers[.vary] == "Accept-Version, Accept-Encoding")
                return (Data(buffer: response.body), response.headers[.eTag])
            }
            #expect(plain.0.count > 1000)
            try await client.execute(uri: "/v1/articles", method: .get, headers: [.acceptEncoding: "br;q=1, gzip;q=0.8"]) { response in
                #expect(response.headers[.contentEncoding] == "gzip")
                #expect(response.headers[.eTag] != plain.1)
                var body = response.body
                #expect(body.readableBytes < plain.0.count)
                let inflated = try body.decompress(with: .gzip())
                #expect(Data(buffer: inflated) == plain.0)
            }
            try await client.execute(uri: "/v1/articles", method: .get, headers: [.acceptEncoding: "gzip;q=0"]) { response in
                #expect(response.headers[.contentEncoding] == nil)
            }
            // A download is never recompressed.
            try await client.execute(uri: "/issues/\(appleID)/files/latest.json", method: .get, headers: [.acceptEncoding: "gzip"]) { response in
                #expect(response.status == .ok && response.headers[.contentEncoding] == nil)
            }
            try await client.execute(uri: "/issues", method: .get, headers: [.origin: "https://reader.example.com"]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == "https://reader.example.com")
                let exposed = response.headers[.accessControlExposeHeaders] ?? ""
                for name in ["ETag", "Link", "Content-Version", "Deprecation", "Sunset"] { #expect(exposed.contains(name)) }
            }
            try await client.execute(uri: "/issues", method: .options,
                                     headers: [.origin: "https://reader.example.com", .accessControlRequestMethod: "GET"]) { response in
                #expect(response.status == .noContent || response.status == .ok)
                #expect(response.headers[.accessControlAllowMethods]?.contains("GET") == true)
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                let text = String(buffer: response.body)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
                #expect(text.contains(#"galley_http_requests_total{route="/v1/articles",method="GET",status="200"} 3"#), "\(text)")
                #expect(text.contains("galley_http_request_duration_seconds_bucket"))
            }
        }
        try await Application(router: server.router()).test(.router) { client in
            try await client.execute(uri: "/issues", method: .get, headers: [.origin: "https://elsewhere.example"]) { response in
                #expect(response.status == .ok && response.headers[.accessControlAllowOrigin] == nil)
            }
        }
        // Without --cors-origin, no CORS headers at all.
        try await test { client in
            try await client.execute(uri: "/issues", method: .get, headers: [.origin: "https://elsewhere.example"]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
        }
    }

    /// Each article as the semantic page `render --page` makes, with no script allowed, its
    /// pictures served by this server's downloads.
    @Test func anArticleIsServedAsARenderedPageWhoseMediaLoad() async throws {
        let article = try #require(try store.articles(ArticleFilter(issue: appleID)).first)
        try await test { client in
            let html = try await client.execute(uri: "/articles/\(article.globalID)/page", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                let policy = response.headers[.contentSecurityPolicy] ?? ""
                #expect(policy.contains("script-src 'none'") && policy.contains("frame-ancestors 'none'"), "\(policy)")
                // Media from this server's downloads only: a body's remote picture is not fetched.
                #expect(policy.contains("img-src 'self' data:;") && !policy.contains("*") && !policy.contains("file:"), "\(policy)")
                #expect(response.headers[.xContentTypeOptions] == "nosniff")
                #expect(response.headers[.eTag] != nil)
                return String(buffer: response.body)
            }
            #expect(html.contains("<h1>\(article.title)</h1>"))
            #expect(!html.contains("<script"))
            let sources = html.components(separatedBy: "src=\"").dropFirst().compactMap { $0.split(separator: "\"").first.map(String.init) }
            #expect(!sources.isEmpty)
            for source in sources {
                #expect(source.hasPrefix("/issues/\(article.issueGlobalID)/files/"), "\(source)")
                try await client.execute(uri: source, method: .head) { response in
                    #expect(response.status == .ok, "\(source)")
                }
            }
            try await client.execute(uri: "/articles/nope/page", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "application/json;charset=UTF-8")
            }
        }
    }

    static let token = "a-long-test-token-0123456789"

    /// Writes: off without a token (403), 401 without the right one, then the same gate and
    /// import as `galley import` (201 new, 200 unchanged, Location), delete, and an upload over
    /// the limit refused before it is stored.
    @Test func writesNeedTheTokenAndImportAndDeleteAsTheCommandsDo() async throws {
        let zip = ByteBuffer(bytes: try Data(contentsOf: Self.fixtures.appending(path: "zips/example-valid.zip")))
        try await test { client in
            try await client.execute(uri: "/issues", method: .post, headers: [.authorization: "Bearer \(Self.token)"], body: zip) { response in
                #expect(response.status == .forbidden)
                let id = try Self.errorID(response)
                #expect(id == "writes.off")
            }
            try await client.execute(uri: "/issues/\(appleID)", method: .delete) { response in
                #expect(response.status == .forbidden)
            }
        }
        var options = ServeOptions()
        options.token = Self.token
        options.maxUpload = 1 << 20
        try await Application(router: GalleyServer(store: store, options: options).router()).test(.router) { client in
            for authorization in [nil, "Bearer wrong", "Bearer \(Self.token)x", "Basic \(Self.token)", "Bearer "] {
                var headers: HTTPFields = [:]
                if let authorization { headers[.authorization] = authorization }
                try await client.execute(uri: "/issues", method: .post, headers: headers, body: zip) { response in
                    #expect(response.status == .unauthorized, "\(authorization ?? "none")")
                    #expect(response.headers[.wwwAuthenticate] == "Bearer realm=\"galley\"")
                    let id = try Self.errorID(response)
                #expect(id == "auth.required")
                }
            }
            let auth: HTTPFields = [.authorization: "Bearer \(Self.token)", .contentType: "application/zip"]
            // A `force` that says neither yes nor no is a 400, not a silent no.
            try await client.execute(uri: "/issues?force=yes", method: .post, headers: auth, body: zip) { response in
                #expect(response.status == .badRequest)
                let id = try Self.errorID(response)
                #expect(id == "usage")
            }
            #expect(throws: GalleyError.self) { try self.store.issueSummary("example-valid") }
            try await client.execute(uri: "/issues", method: .post, headers: auth, body: zip) { response in
                #expect(response.status == .created)
                #expect(response.headers[.location] == "/issues/example-valid")
                let result = try Self.json(response)
                #expect(result["status"] as? String == "imported" && result["apple_id"] as? String == "example-valid")
                #expect((result["package"] as? [String: Any])?["version"] as? Int == 1)
                // The server's temporary file is no business of the sender's: no zip.file-name
                // warning about its name, no finding located there.
                let text = String(buffer: response.body)
                #expect(!text.contains("zip.file-name") && !text.contains("galley-upload-"), "\(text)")
            }
            try await client.execute(uri: "/v2/issues", method: .post, headers: auth, body: zip) { response in
                #expect(response.status == .ok)
                let status = try Self.json(response)["status"] as? String
                #expect(status == "unchanged")
            }
            try await client.execute(uri: "/packages/example-valid", method: .get) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/issues/example-valid", method: .delete, headers: auth) { response in
                #expect(response.status == .ok)
                let deleted = try #require(try Self.json(response)["deleted"] as? [String: Any])
                #expect(deleted["apple_id"] as? String == "example-valid")
            }
            try await client.execute(uri: "/issues/example-valid", method: .get) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/issues/example-valid", method: .delete, headers: auth) { response in
                #expect(response.status == .notFound)
            }
            let revision = try self.store.revision()
            try await client.execute(uri: "/issues", method: .post, headers: auth,
                                     body: ByteBuffer(bytes: [UInt8](repeating: 0x50, count: (1 << 20) + 1))) { response in
                #expect(response.status == .contentTooLarge)
                let id = try Self.errorID(response)
                #expect(id == "upload.too-large")
            }
            #expect(try self.store.revision() == revision)
        }
    }

    /// Every hostile or broken zip of the validate corpus, uploaded: refused (422, with the
    /// findings), and the store exactly as it was.
    @Test func everyHostileZipUploadedIsRefusedAndTheStoreUnchanged() async throws {
        var options = ServeOptions()
        options.token = Self.token
        let zips = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures.appending(path: "zips").path)
            .filter { $0.hasSuffix("-error.zip") && $0 != "older-format-error.zip" }.sorted()
        #expect(zips.count > 40)
        let revision = try store.revision()
        let files = try FileManager.default.subpathsOfDirectory(atPath: store.root.path).sorted()
        try await Application(router: GalleyServer(store: store, options: options).router()).test(.router) { client in
            for name in zips {
                let body = ByteBuffer(bytes: try Data(contentsOf: Self.fixtures.appending(path: "zips/\(name)")))
                try await client.execute(uri: "/issues", method: .post, headers: [.authorization: "Bearer \(Self.token)"], body: body) { response in
                    #expect(response.status == .unprocessableContent, "\(name)")
                    let error = try #require(try Self.json(response)["error"] as? [String: Any], "\(name)")
                    #expect(["input.problems", "input.unreadable", "input.wrong-kind"].contains(error["id"] as? String ?? ""), "\(name): \(error)")
                }
            }
        }
        #expect(try store.revision() == revision)
        #expect(try FileManager.default.subpathsOfDirectory(atPath: store.root.path).sorted() == files)
        #expect(try store.check().problems.isEmpty)
    }

    static let fixtures = TestFiles.fixtures

    /// The Drupal packager's endpoint and the feed: `{version, file_path}` per issue, the version
    /// growing with each import that changes it, the zip at a content-named address with ranges,
    /// and older-format zips kept out.
    @Test func thePackageFeedNamesEachIssuesZipAndItsVersion() async throws {
        let root = Scratch.path("galley-serve-feed")
        let feedStore = try SQLiteStore(at: root, access: .create)
        let older = Self.fixtures.appending(path: "versions/example-valid.zip").path
        let newer = Self.fixtures.appending(path: "zips/example-valid.zip").path
        _ = try feedStore.importZip(older, force: false)
        let olderSHA = try FileDigest.of(older).sha256
        let zip = try Data(contentsOf: URL(fileURLWithPath: newer))
        let newerDigest = try FileDigest.of(newer)
        var options = ServeOptions()
        options.publicURL = "https://cdn.example.com/"
        let app = Application(router: GalleyServer(store: feedStore, options: options).router())
        try await app.test(.router) { client in
            let tag = try await client.execute(uri: "/packages/example-valid", method: .get) { response in
                #expect(response.status == .ok)
                let answer = try Self.json(response)
                #expect(answer["version"] as? Int == 1)
                #expect(answer["file_path"] as? String == "https://cdn.example.com/packages/example-valid/\(olderSHA).zip")
                return try #require(response.headers[.eTag])
            }
            try await client.execute(uri: "/packages/example-valid", method: .get, headers: [.ifNoneMatch: tag]) { response in
                #expect(response.status == .notModified)
            }
            // A newer zip: the version goes up, the feed lists it, the old address is gone.
            _ = try feedStore.importZip(newer, force: false)
            try await client.execute(uri: "/packages/example-valid", method: .get, headers: [.ifNoneMatch: tag]) { response in
                #expect(response.status == .ok)
                let answer = try Self.json(response)
                #expect(answer["version"] as? Int == 2)
            }
            try await client.execute(uri: "/v1/feed", method: .get) { response in
                let feed = try Self.json(response)
                #expect(feed["revision"] is Int)
                let packages = try #require(feed["packages"] as? [[String: Any]])
                #expect(packages.count == 1)
                let first = try #require(packages.first)
                #expect(first["apple_id"] as? String == "example-valid" && first["version"] as? Int == 2)
                #expect(first["sha256"] as? String == newerDigest.sha256 && first["size"] as? Int == Int(newerDigest.size))
                #expect(first["last_updated"] is String && first["global_id"] is String)
            }
            let path = "/packages/example-valid/\(newerDigest.sha256).zip"
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status == .ok)
                #expect(Data(buffer: response.body) == zip)
                #expect(response.headers[.contentType] == "application/zip")
                #expect(response.headers[.eTag] == "\"\(newerDigest.sha256)\"")
                #expect(response.headers[.contentDisposition] == "attachment; filename=\"example-valid.zip\"")
                #expect(response.headers[HTTPField.Name("Repr-Digest")!]?.hasPrefix("sha-256=:") == true)
            }
            try await client.execute(uri: path, method: .get, headers: [.range: "bytes=100-", .ifRange: "\"\(newerDigest.sha256)\""]) { response in
                #expect(response.status == .partialContent)
                #expect(Data(buffer: response.body) == zip[100...])
            }
            for stale in ["/packages/example-valid/\(olderSHA).zip", "/packages/example-valid/..%2F..%2Fstore.sqlite",
                          "/packages/..%2Fstore.sqlite/\(newerDigest.sha256).zip", "/packages/nope"] {
                try await client.execute(uri: stale, method: .get) { response in
                    #expect(response.status == .notFound, "\(stale)")
                    #expect(!Data(buffer: response.body).starts(with: Data("SQLite format".utf8)))
                }
            }
        }

        // An older Linechef format: imported, but never in the feed.
        let legacyStore = try SQLiteStore(at: root.appending(path: "legacy"), access: .create)
        _ = try legacyStore.importZip(Self.fixtures.appending(path: "zips/older-format-error.zip").path, force: false)
        try await Application(router: GalleyServer(store: legacyStore).router()).test(.router) { client in
            try await client.execute(uri: "/feed", method: .get) { response in
                let packages = try #require(try Self.json(response)["packages"] as? [Any])
                #expect(packages.isEmpty)
            }
            try await client.execute(uri: "/packages/older-format-error", method: .get) { response in
                #expect(response.status == .notFound)
                let error = try #require(try Self.json(response)["error"] as? [String: Any])
                #expect(error["id"] as? String == "package.withheld")
                #expect((error["message"] as? String)?.contains("older Linechef format") == true)
            }
        }
    }

    @Test(arguments: [
        "..%2F..%2Fstore.sqlite", "%2e%2e%2fstore.sqlite", "..%252F..%252Fstore.sqlite", "cover.jpg%00.txt",
        "..%5C..%5Cstore.sqlite", ".lock", "latest.json%2F..%2F..%2F..%2Fstore.sqlite", String(repeating: "a", count: 5000),
    ])
    func noPathLeavesTheIssuesFiles(name: String) async throws {
        try await test { client in
            try await client.execute(uri: "/issues/\(appleID)/files/\(name)", method: .get) { response in
                #expect(response.status == .notFound, "\(name)")
                #expect(!Data(buffer: response.body).starts(with: Data("SQLite format".utf8)))
            }
            // The kept zips' route, and every id that reaches the store, the same.
            for uri in ["/packages/\(appleID)/\(name)", "/packages/\(name)/\(name)", "/articles/\(name)/page", "/issues/\(name)",
                        "/issues/..%2F..%2F/files/store.sqlite"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .notFound, "\(uri)")
                    #expect(!Data(buffer: response.body).starts(with: Data("SQLite format".utf8)))
                }
            }
        }
    }

    @Test func aRecordedFileGoneFromDiskIsA500InTheOneShape() async throws {
        let file = try store.file("cover.jpg", issue: appleID)
        try FileManager.default.removeItem(atPath: file.path)
        try await test { client in
            try await client.execute(uri: "/issues/\(appleID)/files/cover.jpg", method: .get) { response in
                #expect(response.status == .internalServerError)
                let error = try #require(try Self.json(response)["error"] as? [String: Any])
                #expect(error["id"] as? String == "store.failed")
                // The mend (`galley store check`) is the operator's: it goes to the server's log.
                let hint = try #require(error["hint"] as? String)
                #expect(hint.contains("its log") && !hint.contains("galley"), "\(hint)")
            }
        }
    }

    @Test func healthzAnswersWithTheRevision() async throws {
        try await test { client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                let health = try Self.json(response)
                #expect(health["status"] as? String == "ok")
            }
        }
    }

    @Test(arguments: [("2", APIVersion.v2), ("2.0", .v2), ("v1", .v1), ("1.x", .v1)])
    func acceptVersionIsReadAsClientsWriteIt(header: String, version: APIVersion) {
        #expect(APIVersion(header: header) == version)
    }

    @Test(arguments: ["3", "1.5", "", "x"])
    func unknownVersionsAreRefused(header: String) {
        #expect(APIVersion(header: header) == nil)
    }

    @Test func rangesAreParsedAsRFC9110Says() {
        #expect(ByteRange(header: "bytes=0-9", size: 100) == .part(0...9))
        #expect(ByteRange(header: "bytes=90-200", size: 100) == .part(90...99))
        #expect(ByteRange(header: "bytes=-5", size: 100) == .part(95...99))
        #expect(ByteRange(header: "bytes=100-", size: 100) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=0-1,5-6", size: 100) == .whole)
        #expect(ByteRange(header: "bytes=9-1", size: 100) == .whole)
        #expect(ByteRange(header: "items=0-1", size: 100) == .whole)
        #expect(ByteRange(header: "bytes=abc", size: 100) == .whole)
        #expect(ByteRange(header: nil, size: 100) == .whole)
    }

    @Test func ifNoneMatchIsReadAsRFC9110Says() {
        let tag = "\"r7-v2-abc\""
        #expect(GalleyServer.matches(tag, tag))
        #expect(GalleyServer.matches("*", tag))
        #expect(GalleyServer.matches("W/\(tag)", tag))
        #expect(GalleyServer.matches("\"other\", \t\(tag) ", tag))
        #expect(GalleyServer.matches("\"other\",W/\(tag)", tag))
        #expect(!GalleyServer.matches(nil, tag))
        #expect(!GalleyServer.matches("", tag))
        #expect(!GalleyServer.matches("\"r7-v2-ab\"", tag))
        #expect(!GalleyServer.matches("r7-v2-abc", tag))
        #expect(!GalleyServer.matches("W/ \(tag)x", tag))
        #expect(!GalleyServer.matches("\"other\", **", tag))
    }
}

extension Data {
    init(buffer: ByteBuffer) {
        self = Data(buffer.readableBytesView)
    }
}

/// The kept answers' bounds, on the cache itself.
@Suite struct ResponseCacheTests {
    static func entry(_ bytes: Int) -> ResponseCache.Entry {
        ResponseCache.Entry(tag: "\"t\"", headers: [:], body: ByteBuffer(repeating: 0x61, count: bytes))
    }

    @Test func itHoldsNoMoreThanItsCapacityOldestLeavingFirst() {
        let cache = ResponseCache(capacity: 8_000)
        for index in 0..<20 { cache.store(Self.entry(900), for: "k\(index)", revision: 1) }
        #expect(cache.size <= 8_000)
        #expect(cache.entry("k0", revision: 1) == nil, "the oldest left")
        #expect(cache.entry("k19", revision: 1)?.body.readableBytes == 900)
        cache.store(Self.entry(1_500), for: "big", revision: 1)
        #expect(cache.entry("big", revision: 1) == nil, "an answer over an eighth of the room is not kept")
    }

    @Test func aNewerRevisionEmptiesItAndAnOlderOneIsNeverKept() {
        let cache = ResponseCache(capacity: 8_000)
        cache.store(Self.entry(10), for: "a", revision: 5)
        #expect(cache.entry("a", revision: 5) != nil)
        #expect(cache.entry("a", revision: 6) == nil, "made at another revision")
        cache.store(Self.entry(10), for: "b", revision: 6)
        #expect(cache.entry("a", revision: 6) == nil && cache.entry("b", revision: 6) != nil)
        #expect(cache.size == 11)
        // A request that read revision 5 before the import finishes late: not kept.
        cache.store(Self.entry(10), for: "c", revision: 5)
        #expect(cache.entry("c", revision: 5) == nil && cache.entry("c", revision: 6) == nil)
    }
}
