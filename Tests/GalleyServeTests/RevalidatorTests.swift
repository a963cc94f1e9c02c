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

    init() throws {
        let store = try ServeRouterTests.exampleStore("galley-revalidator")
        let cache = ResponseCache()
        let metrics = ServeMetrics()
        let series = metrics.series(route: "/v2/issues", method: .get, status: .notModified)
        // What `resource` keeps after answering GET /v2/issues with Host: x and no other input.
        cache.keep(HTTPValidator(revision: try store.recentRevision(), tag: tag, headers: [.eTag: tag], counted: series,
                             countedFull: series, answerKey: "none kept", period: nil),
                   for: Revalidator.key(path: "/v2/issues", version: nil, encoding: nil, authority: "x", host: true))
        revalidator = Revalidator(store: store, cache: cache, keysHost: true, signatureLifetime: 86_400,
                                  logger: Logger(label: "test"), serverName: "galley")
    }

    func answered(_ headers: [(String, String)], method: HTTPMethod = .GET, uri: String = "/v2/issues",
                  version: HTTPVersion = .http1_1) -> Bool {
        let head = HTTPRequestHead(version: version, method: method, uri: uri,
                                   headers: HTTPHeaders([("Host", "x"), ("If-None-Match", tag)] + headers))
        guard case .notModified(let validator) = revalidator.answerable(head) else { return false }
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
}
