@testable import GalleyServe
import GalleyStore
import HTTPTypes
import Logging
import NIOHTTP1
import Testing

/// Which requests `Revalidator` answers before the router: exactly those the router would
/// answer with the same bytes, read from NIO's request head.
@Suite struct RevalidatorTests {
    let revalidator: Revalidator
    let tag = "\"r1-v2-0123456789abcdef\""
    let base = "http://127.0.0.1:8080"

    init() throws {
        try self.init(forwardedMatters: false)
    }

    init(forwardedMatters: Bool) throws {
        let store = try ServeRouterTests.exampleStore("galley-revalidator")
        let cache = ResponseCache()
        let metrics = ServeMetrics()
        let series = metrics.series(route: "/v2/issues", method: .get, status: .notModified)
        // What `resource` keeps after answering GET /v2/issues on 127.0.0.1:8080 with no other input.
        cache.keep(HTTPValidator(revision: try store.recentRevision(), tag: tag, headers: [.eTag: tag], counted: series,
                             countedFull: series, answerKey: "none kept", period: nil),
                   for: Revalidator.key(path: "/v2/issues", version: nil, encoding: nil, base: base))
        revalidator = Revalidator(store: store, cache: cache, keysOrigin: true, forwardedMatters: forwardedMatters, signatureLifetime: 86_400,
                                  logger: Logger(label: "test"), serverName: "galley",
                                  healthSeries: ServeMetrics().series(route: "/healthz", method: .get, status: .ok))
    }

    func answered(_ headers: [(String, String)], method: HTTPMethod = .GET, uri: String = "/v2/issues",
                  version: HTTPVersion = .http1_1, host: String? = "x") -> Bool {
        let head = HTTPRequestHead(version: version, method: method, uri: uri,
                                   headers: HTTPHeaders((host.map { [("Host", $0)] } ?? []) + [("If-None-Match", tag)] + headers))
        guard case .notModified(let validator) = revalidator.answerable(head, base: base) else { return false }
        return validator.tag == tag
    }

    @Test func aRevalidationOfSeenInputsIsAnsweredWhateverTheNamesCase() {
        #expect(answered([]))
        #expect(answered([("User-Agent", "Reader/1.0"), ("Accept", "application/json")]), "other headers do not matter")
        #expect(answered([("Connection", "keep-alive")]), "what most HTTP/1.1 clients send")
        #expect(answered([("CONNECTION", "Keep-Alive")]))
    }

    @Test(arguments: [
        [("Connection", "close")], [("Connection", "keep-alive, Upgrade")], [("Origin", "https://a.example")],
        [("Content-Length", "3")], [("Transfer-Encoding", "chunked")], [("Expect", "100-continue")], [("Upgrade", "h2c")],
        [("Host", "y")], [("If-None-Match", "\"other\"")], [("Accept-Version", "2.0")], [("Accept-Encoding", "gzip")],
        [("accept-encoding", "gzip"), ("Accept-Encoding", "br")],
    ])
    func whatTheRouterWouldAnswerOtherwiseGoesToIt(headers: [(String, String)]) {
        #expect(!answered(headers), "\(headers)")
    }

    @Test func otherMethodsVersionsAndTargetsGoToTheRouter() {
        #expect(!answered([], method: .HEAD))
        #expect(!answered([], method: .POST))
        #expect(!answered([], version: .http1_0), "HTTP/1.0 closes unless asked not to")
        #expect(!answered([], uri: "http://x/v2/issues"), "an absolute-form target")
        #expect(!answered([], uri: "/v2/issues?limit=5"), "other inputs")
    }

    /// The links name the connection's address, not the Host sent: any one Host gets the same
    /// answer; none (or two) is the router's 400.
    @Test func theHostSentIsNoInputButItsAbsenceIsTheRouters() {
        #expect(answered([], host: "evil.example"))
        #expect(!answered([], host: nil))
        #expect(!answered([("Host", "x")]))
    }

    /// Forwarded headers name the origin only from a trusted proxy: with one configured, a
    /// request carrying them is the router's (which knows the peer); without, they are noise.
    @Test(arguments: [[("Forwarded", "host=a.example")], [("X-Forwarded-Host", "a.example")], [("x-forwarded-proto", "https")]])
    func forwardedHeadersGoToTheRouterOnlyWhenAProxyIsTrusted(headers: [(String, String)]) throws {
        #expect(answered(headers))
        #expect(!(try RevalidatorTests(forwardedMatters: true)).answered(headers))
    }
}
