import Foundation
import GalleyCore
import GalleySigning
import GalleyStore
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// What `GalleyServer.resource` decided for one set of request inputs at one store revision:
/// the answer's strong tag, the headers of its 304, and where its 200 is kept.
final class Validator: Sendable {
    let revision: Int64
    let tag: String
    /// The 304's headers (`GalleyServer.validatorHeaders`), without Date and Server.
    let headers: HTTPFields
    /// The route's 304s in `/metrics`.
    let counted: ServeMetrics.Series
    /// The route's 200s in `/metrics`.
    let countedFull: ServeMetrics.Series
    /// The `ResponseCache` key of the 200 these inputs get: answered early while the cache
    /// still keeps it (it may have been too large to keep, or evicted since).
    let answerKey: String
    /// The signature period a signed answer's tag belongs to; nil: unsigned.
    let period: Int64?

    // A class, not a struct: the early path hands it around per request, and one reference
    // counts once where a struct of fields counted each of its references.
    init(revision: Int64, tag: String, headers: HTTPFields, counted: ServeMetrics.Series, countedFull: ServeMetrics.Series,
         answerKey: String, period: Int64?) {
        (self.revision, self.tag, self.headers, self.counted, self.countedFull, self.answerKey, self.period)
            = (revision, tag, headers, counted, countedFull, answerKey, period)
    }
}

/// What the early path answers a request with.
enum EarlyAnswer {
    /// 304: the client's tag is current.
    case notModified(Validator)
    /// 200 with the kept answer: the client has no current tag.
    case full(Validator, ResponseCache.Entry)
}

/// Answers revalidations (`If-None-Match` naming the current tag), and requests for an answer
/// already made and kept at the current revision, on the connection's event loop, before the
/// request reaches Hummingbird's router.
///
/// Why by hand: a 304 is what reader apps send most (every launch, every pull to refresh), and
/// the first pages of the listings the next most; through the router each one costs a task
/// hop, the request and response models and the middleware chain, which held them to about
/// half of nginx's rate. Here it costs a dictionary lookup or two, the store's recent revision
/// (`IssueStore.recentRevision`) and one write. Only what the router would answer with the
/// same bytes is answered here: a GET whose inputs (`Revalidator.key`) `resource` has already
/// seen at the current revision, and either whose tag matches (304) or whose 200 the
/// `ResponseCache` still keeps, from a client that sent no `Origin` (CORS adds headers) and no
/// `Connection` header, on a local store (a network store's revision is a query, never made on
/// an event loop). Everything else goes on unchanged.
struct Revalidator: Sendable {
    let store: any IssueStore
    let cache: ResponseCache
    /// Whether the Host is one of the inputs (no `--public-url`: the feed's addresses name it).
    let keysHost: Bool
    let signatureLifetime: TimeInterval
    let logger: Logger
    let serverName: String?

    /// The inputs a JSON resource's answer depends on, as one string: the request target (path
    /// and query, which also carries a `/v1` or `/v2` prefix), `Accept-Version`,
    /// `Accept-Encoding` and, without `--public-url`, `Host`, each as sent.
    static func key(_ request: HTTPRequest, host: Bool) -> String {
        let version = request.headerFields[GalleyServer.acceptVersion] ?? "\u{0}"
        let encoding = request.headerFields[.acceptEncoding] ?? "\u{0}"
        let authority = host ? request.authority ?? "\u{0}" : ""
        return "\(request.path ?? "")\u{1F}\(version)\u{1F}\(encoding)\u{1F}\(authority)"
    }

    /// What a request may be answered with here, or nil: the router answers it.
    func answerable(_ request: HTTPRequest) -> EarlyAnswer? {
        guard request.method == .get,
              request.headerFields[.origin] == nil, request.headerFields[.connection] == nil,
              !store.waitsOnNetwork,
              let revision = try? store.recentRevision(),
              let validator = cache.validator(Self.key(request, host: keysHost), revision: revision) else { return nil }
        if let period = validator.period, FeedSignature.expiry(at: Date(), ttl: signatureLifetime).period != period {
            return nil
        }
        if let asked = request.headerFields[.ifNoneMatch], GalleyServer.matches(asked, validator.tag) {
            return .notModified(validator)
        }
        // The kept answer's tag is the validator's whenever both are at this revision; the
        // check keeps a mismatch from ever being served.
        guard let kept = cache.entry(validator.answerKey, revision: revision), kept.tag == validator.tag else { return nil }
        return .full(validator, kept)
    }

    /// What the router would have counted and logged for the answer.
    func account(_ request: HTTPRequest, _ answer: EarlyAnswer, since start: UInt64) {
        let elapsed = Int64(DispatchTime.now().uptimeNanoseconds - start)
        let (series, status, bytes): (ServeMetrics.Series, HTTPResponse.Status, Int)
        switch answer {
        case .notModified(let validator): (series, status, bytes) = (validator.counted, .notModified, 0)
        case .full(let validator, let kept): (series, status, bytes) = (validator.countedFull, .ok, kept.body.readableBytes)
        }
        series.record(nanoseconds: elapsed)
        if logger.logLevel <= .notice {
            let path = (request.path ?? "").split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            logger.notice(ServeMetrics.accessLine(.get, path, status, bytes: String(bytes), nanoseconds: elapsed))
        }
    }
}

/// The channel handler that answers from `Revalidator`, placed after Hummingbird's connection
/// state handler (which then sees every request and response, so idle timeouts and graceful
/// shutdown work as for any other request) and before the router's channel.
///
/// A request is held from its head to its end: if a body part comes, it is handed on whole.
/// While an earlier request on the connection is still being answered by the router, nothing
/// is answered here (pipelined answers must keep their order).
final class RevalidationHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let revalidator: Revalidator
    /// Requests handed to the router whose response has not ended yet.
    private var routed = 0
    /// A request being read, to be answered here at its end.
    private var held: (request: HTTPRequest, answer: EarlyAnswer, start: UInt64)?
    private var unflushed = false
    private var date = HTTPDate()

    init(_ revalidator: Revalidator) {
        self.revalidator = revalidator
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            let start = DispatchTime.now().uptimeNanoseconds
            if routed == 0, held == nil, let answer = revalidator.answerable(request) {
                held = (request, answer, start)
                return
            }
            routed += 1
            context.fireChannelRead(data)
        case .body:
            if let held {
                // A GET with a body: not what this path is for; the router has it all.
                self.held = nil
                routed += 1
                context.fireChannelRead(wrapInboundOut(.head(held.request)))
            }
            context.fireChannelRead(data)
        case .end:
            guard let held else {
                context.fireChannelRead(data)
                return
            }
            self.held = nil
            // The headers in the router's order: the answer's, then Content-Length, Date, Server.
            var headers: HTTPFields
            switch held.answer {
            case .notModified(let validator):
                headers = validator.headers
            case .full(_, let kept):
                headers = kept.headers
                headers[.contentLength] = String(kept.body.readableBytes)
            }
            headers[.date] = date.now()
            if let server = revalidator.serverName { headers[.server] = server }
            switch held.answer {
            case .notModified:
                context.write(wrapOutboundOut(.head(HTTPResponse(status: .notModified, headerFields: headers))), promise: nil)
            case .full(_, let kept):
                context.write(wrapOutboundOut(.head(HTTPResponse(status: .ok, headerFields: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(kept.body)), promise: nil)
            }
            context.write(wrapOutboundOut(.end(nil)), promise: nil)
            unflushed = true
            revalidator.account(held.request, held.answer, since: held.start)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { routed = max(routed - 1, 0) }
        context.write(data, promise: promise)
    }
}

/// Hummingbird's HTTP/1 channel with the `RevalidationHandler` in its pipeline.
struct RevalidatingHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let revalidator: Revalidator

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let revalidator = revalidator
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let state = try pipeline.context(handlerType: HTTPConnectionStateHandler.self)
            try pipeline.addHandler(RevalidationHandler(revalidator), position: .after(state.handler))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
