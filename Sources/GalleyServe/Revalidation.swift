import Foundation
import GalleyCore
import GalleySigning
import GalleyStore
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// What `GalleyServer.resource` decided for one set of request inputs at one store revision:
/// the answer's strong tag, the headers of its 304, and where its 200 is kept.
final class HTTPValidator: Sendable {
    let revision: Int64
    let tag: String
    /// The 304's headers (`GalleyServer.validatorHeaders`) in NIO's model, without Date and
    /// Server.
    let headers: HTTPHeaders
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
        (self.revision, self.tag, self.counted, self.countedFull, self.answerKey, self.period)
            = (revision, tag, counted, countedFull, answerKey, period)
        self.headers = Self.converted(headers, contentLength: nil)
    }

    /// Headers in NIO's model as Hummingbird's conversion makes them (names as given, in
    /// order), then `Content-Length` when there is a body.
    static func converted(_ headers: HTTPFields, contentLength: Int?) -> HTTPHeaders {
        var converted = HTTPHeaders(headers.map { ($0.name.rawName, $0.value) })
        if let contentLength { converted.add(name: "Content-Length", value: String(contentLength)) }
        return converted
    }
}

/// What the early path answers a request with.
enum EarlyAnswer {
    /// 304: the client's tag is current.
    case notModified(HTTPValidator)
    /// 200 with the kept answer: the client has no current tag.
    case full(HTTPValidator, ResponseCache.Entry)
    /// `/healthz`'s 200 at this revision: a probe is answered here, never behind the router's
    /// work, so a server busy with thousands of downloads still looks alive to its balancer.
    case health(revision: Int64)
}

/// Answers revalidations (`If-None-Match` naming the current tag), and requests for an answer
/// already made and kept at the current revision, on the connection's event loop, as soon as
/// NIO has parsed the request: before the conversion to Swift HTTP Types and the router.
///
/// Why by hand: a 304 is what reader apps send most (every launch, every pull to refresh), and
/// the first pages of the listings the next most; through the router each one costs a task
/// hop, the request and response models and the middleware chain, which held them to about
/// half of nginx's rate, and even answered beside the router, converting each request and
/// response between NIO's and Swift HTTP Types' models held them under 0.8x. Here it costs
/// one pass over the request's headers, a dictionary lookup or two, the store's recent
/// revision (`IssueStore.recentRevision`) and a response head in NIO's model made when the
/// answer was. Only what the router would answer with the same bytes is answered here: an
/// HTTP/1.1 GET of an origin-form target whose inputs (`Revalidator.key`) `resource` has
/// already seen at the current revision, and either whose tag matches (304) or whose 200 the
/// `ResponseCache` still keeps, from a client that sent no `Origin` (CORS adds headers), no
/// `Connection` but `keep-alive`, no body and no input header twice, on a local store (a
/// network store's revision is a query, never made on an event loop). Everything else goes on
/// unchanged.
struct Revalidator: Sendable {
    let store: any IssueStore
    let cache: ResponseCache
    /// Whether the links' origin is one of the inputs (no `--public-url`: the feed's
    /// addresses name it).
    let keysOrigin: Bool
    /// Whether `Forwarded` and `X-Forwarded-*` may change the origin (`--trusted-proxy`, no
    /// `--public-url`): requests that carry them go to the router.
    let forwardedMatters: Bool
    let signatureLifetime: TimeInterval
    let logger: Logger
    let serverName: String?
    /// Where `/healthz` answered here is counted, as the router counts it.
    let healthSeries: ServeMetrics.Series

    /// The inputs a JSON resource's answer depends on, as one string: the request target (path
    /// and query, which also carries a `/v1` or `/v2` prefix), `Accept-Version` and
    /// `Accept-Encoding`, each as sent, and the links' origin (`GalleyServer.baseURL`; empty
    /// with `--public-url`).
    static func key(path: String, version: String?, encoding: String?, base: String) -> String {
        var key = path
        key.reserveCapacity(path.utf8.count + (version?.utf8.count ?? 1) + (encoding?.utf8.count ?? 1) + base.utf8.count + 3)
        key += "\u{1F}"
        key += version ?? "\u{0}"
        key += "\u{1F}"
        key += encoding ?? "\u{0}"
        key += "\u{1F}"
        key += base
        return key
    }

    /// The key of a request the router has (Swift HTTP Types' model: its path is the request
    /// target as sent).
    static func key(_ request: HTTPRequest, base: String) -> String {
        key(path: request.path ?? "", version: request.headerFields[GalleyServer.acceptVersion],
            encoding: request.headerFields[.acceptEncoding], base: base)
    }

    /// The request headers the early path reads or declines on.
    private enum Field {
        case acceptVersion, acceptEncoding, host, ifNoneMatch, connection
        /// `Forwarded`, `X-Forwarded-Host`, `X-Forwarded-Proto`: the origin, from a trusted proxy.
        case forwarded
        /// Makes the router's answer differ (`Origin`) or brings a body.
        case declines
        case other

        /// Header names are ASCII tokens (NIO's parser refuses anything else), so setting the
        /// 0x20 bit folds exactly their letters.
        init(_ name: String) {
            func named(_ lower: StaticString) -> Bool {
                guard name.utf8.count == lower.utf8CodeUnitCount else { return false }
                var index = 0
                let expected = lower.utf8Start
                for byte in name.utf8 {
                    guard byte | 0x20 == expected[index] | 0x20 else { return false }
                    index += 1
                }
                return true
            }
            switch name.utf8.count {
            case 4: self = named("host") ? .host : .other
            case 6: self = named("origin") || named("expect") ? .declines : .other
            case 7: self = named("upgrade") ? .declines : .other
            case 9: self = named("forwarded") ? .forwarded : .other
            case 16: self = named("x-forwarded-host") ? .forwarded : .other
            case 10: self = named("connection") ? .connection : .other
            case 13: self = named("if-none-match") ? .ifNoneMatch : .other
            case 14: self = named("accept-version") ? .acceptVersion : named("content-length") ? .declines : .other
            case 15: self = named("accept-encoding") ? .acceptEncoding : .other
            case 17: self = named("transfer-encoding") ? .declines : named("x-forwarded-proto") ? .forwarded : .other
            default: self = .other
            }
        }
    }

    /// What a request may be answered with here, or nil: the router answers it. `base` is the
    /// links' origin on this connection (`PublicOrigin.listening`).
    func answerable(_ head: HTTPRequestHead, base: String) -> EarlyAnswer? {
        guard head.method == .GET, head.version == .http1_1, head.uri.utf8.first == UInt8(ascii: "/"),
              !store.waitsOnNetwork else { return nil }
        if head.uri == "/healthz" {
            // The router's 400s (no Host, or two) and CORS headers stay the router's.
            guard head.headers[canonicalForm: "host"].count == 1, !head.headers.contains(name: "origin"),
                  let revision = try? store.recentRevision() else { return nil }
            return .health(revision: revision)
        }
        var version: String?, encoding: String?, authority: String?, asked: String?
        // Keeps an input's value; false when it came before (sent twice: the router's).
        func once(_ slot: inout String?, _ value: String) -> Bool {
            guard slot == nil else { return false }
            slot = value
            return true
        }
        for (name, value) in head.headers {
            switch Field(name) {
            case .acceptVersion: guard once(&version, value) else { return nil }
            case .acceptEncoding: guard once(&encoding, value) else { return nil }
            case .host: guard once(&authority, value) else { return nil }
            case .ifNoneMatch: guard once(&asked, value) else { return nil }
            case .connection:
                // What most HTTP/1.1 clients send (URLSession, OkHttp, browsers), and HTTP/1.1's
                // default anyway; anything else (close, upgrade) is the router's.
                guard value.lowercased() == "keep-alive" else { return nil }
            case .declines:
                return nil
            case .forwarded:
                if forwardedMatters { return nil }
            case .other:
                continue
            }
        }
        // No Host is the router's 400 (RFC 9112 section 3.2).
        guard authority != nil, let revision = try? store.recentRevision(),
              let validator = cache.validator(Self.key(path: head.uri, version: version, encoding: encoding, base: keysOrigin ? base : ""),
                                              revision: revision) else { return nil }
        if let period = validator.period, FeedSignature.expiry(at: Date(), ttl: signatureLifetime).period != period {
            return nil
        }
        if let asked, GalleyServer.matches(asked, validator.tag) {
            return .notModified(validator)
        }
        // The kept answer's tag is the validator's whenever both are at this revision; the
        // check keeps a mismatch from ever being served.
        guard let kept = cache.entry(validator.answerKey, revision: revision), kept.tag == validator.tag else { return nil }
        return .full(validator, kept)
    }

    /// What the router would have counted and logged for the answer.
    func account(_ head: HTTPRequestHead, _ answer: EarlyAnswer, since start: NIODeadline) {
        let elapsed = (NIODeadline.now() - start).nanoseconds
        let (series, status, bytes): (ServeMetrics.Series, HTTPResponse.Status, Int)
        switch answer {
        case .notModified(let validator): (series, status, bytes) = (validator.counted, .notModified, 0)
        case .full(let validator, let kept): (series, status, bytes) = (validator.countedFull, .ok, kept.body.readableBytes)
        case .health(let revision): (series, status, bytes) = (healthSeries, .ok, GalleyServer.healthText(revision).utf8.count)
        }
        series.record(nanoseconds: elapsed)
        if logger.logLevel <= .notice {
            let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            logger.notice(ServeMetrics.accessLine(.get, path, status, bytes: String(bytes), nanoseconds: elapsed))
        }
    }
}

/// The channel handler that answers from `Revalidator`, placed right after NIO's HTTP/1 request
/// decoder, before the conversion to Swift HTTP Types. Its answers go to NIO's response encoder
/// as NIO's response parts (never past it: the decoder tells the encoder each request's method,
/// and the encoder matches them to responses in order); the router's responses pass through it
/// on their way there.
///
/// Hummingbird's connection state handler sits behind the conversion and never sees a request
/// answered here, so this handler also keeps the idle timeout, with that handler's rule, for
/// every request (that one is given none): a connection is closed once nothing was read or
/// answered for the timeout, unless a response is still being made for a request read whole.
/// Graceful shutdown stays with that handler: it waits for the router's responses, and one
/// answered here is complete (written and flushed) within the read that brought it.
///
/// A request is held from its head to its end: if a body part comes, it is handed on whole.
/// While an earlier request on the connection is still being answered by the router, nothing
/// is answered here (pipelined answers must keep their order).
final class RevalidationHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let revalidator: Revalidator
    private let idleTimeout: TimeAmount?
    /// Requests handed to the router whose response has not ended yet.
    private var routed = 0
    /// Between a request's head and its end.
    private var reading = false
    /// A request being read, to be answered here at its end.
    private var held: (head: HTTPRequestHead, answer: EarlyAnswer, start: NIODeadline)?
    private var unflushed = false
    /// The `Date` of the answers, made once a second.
    private var date: (second: Int, text: String) = (-1, "")
    private var lastActive = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?
    /// The links' origin on this connection (`PublicOrigin.listening`).
    private var base = ""
    /// The server's connections, past whose cap this one came (nil: within it).
    private let pastCap: ConnectionGate?
    /// A request of a connection past the cap being read, to be answered 503 at its end.
    private var refusing: HTTPRequestHead?

    init(_ revalidator: Revalidator, idleTimeout: TimeAmount?, pastCap: ConnectionGate? = nil) {
        self.revalidator = revalidator
        self.idleTimeout = idleTimeout
        self.pastCap = pastCap
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { becameActive(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        idleCheck = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        becameActive(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        idleCheck = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = NIODeadline.now()
        lastActive = now
        switch unwrapInboundIn(data) {
        case .head(let head):
            reading = true
            if pastCap != nil, !ConnectionGate.isOperatorProbe(head.uri) {
                // Answered in order or not at all: behind a routed probe, the connection just ends.
                guard routed == 0 else { return context.close(promise: nil) }
                refusing = head
                return
            }
            if routed == 0, held == nil, let answer = revalidator.answerable(head, base: base) {
                held = (head, answer, now)
                return
            }
            routed += 1
            context.fireChannelRead(data)
        case .body:
            if refusing != nil { return }
            // A GET with a body, though it named no length: the router has it all.
            handOn(context)
            context.fireChannelRead(data)
        case .end:
            reading = false
            if let refused = refusing {
                refusing = nil
                return refuse(refused, context)
            }
            guard let held else {
                context.fireChannelRead(data)
                return
            }
            self.held = nil
            answer(held, context)
        }
    }

    /// Hands a held request's head to the router.
    private func handOn(_ context: ChannelHandlerContext) {
        guard let held else { return }
        self.held = nil
        routed += 1
        context.fireChannelRead(wrapInboundOut(.head(held.head)))
    }

    private func answer(_ held: (head: HTTPRequestHead, answer: EarlyAnswer, start: NIODeadline), _ context: ChannelHandlerContext) {
        let second = Int(Date().timeIntervalSince1970)
        if second != date.second { date = (second, HTTPDate.format(second)) }
        // The headers in the router's order: the answer's, then Content-Length, Date, Server.
        var headers: HTTPHeaders
        let status: HTTPResponseStatus
        var body: ByteBuffer?
        switch held.answer {
        case .notModified(let validator):
            (headers, status) = (validator.headers, .notModified)
        case .full(_, let kept):
            (headers, status, body) = (kept.responseHeaders, .ok, kept.body)
        case .health(let revision):
            let text = ByteBuffer(string: GalleyServer.healthText(revision))
            headers = HTTPValidator.converted([.contentType: GalleyServer.json, .cacheControl: "no-store"], contentLength: text.readableBytes)
            (status, body) = (.ok, text)
        }
        headers.add(name: "Date", value: date.text)
        if let server = revalidator.serverName { headers.add(name: "Server", value: server) }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if let body, body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        unflushed = true
        revalidator.account(held.head, held.answer, since: held.start)
    }

    /// 503 for a connection past the cap, in the API's error shape, then the connection closes.
    private func refuse(_ head: HTTPRequestHead, _ context: ChannelHandlerContext) {
        guard let gate = pastCap else { return }
        gate.refused()
        let error = GalleyError("the server has all the connections it takes (\(gate.limit)) open", id: .serverBusy,
                                hint: "Try again after Retry-After seconds.")
        let body = ByteBuffer(string: JSONDocument.encode(ErrorDocument(error)))
        var headers = HTTPHeaders([("Content-Type", GalleyServer.json), ("Cache-Control", "no-store"), ("Retry-After", "5"),
                                   ("Connection", "close"), ("Content-Length", String(body.readableBytes))])
        headers.add(name: "Date", value: HTTPDate.format(Int(Date().timeIntervalSince1970)))
        if let server = revalidator.serverName { headers.add(name: "Server", value: server) }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .serviceUnavailable, headers: headers))), promise: nil)
        if head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
        if revalidator.logger.logLevel <= .notice {
            let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            revalidator.logger.notice(ServeMetrics.accessLine(HTTPRequest.Method(head.method.rawValue) ?? .get, path, .serviceUnavailable,
                                                              bytes: String(body.readableBytes), nanoseconds: 0))
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // Shutting down: a request still being read goes to the router, whose connection
        // handler then closes the connection after answering it rather than at once.
        if event is ChannelShouldQuiesceEvent { handOn(context) }
        context.fireUserInboundEventTriggered(event)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            routed = max(routed - 1, 0)
            lastActive = .now()
            if routed == 0 { scheduleIdleCheck(context, at: lastActive) }
        }
        context.write(data, promise: promise)
    }

    // MARK: Idle timeout (the rule of Hummingbird's `HTTPConnectionStateHandler`)

    private func becameActive(_ context: ChannelHandlerContext) {
        base = PublicOrigin.listening(context.channel.localAddress)
        lastActive = .now()
        scheduleIdleCheck(context, at: lastActive)
    }

    /// Looks at the connection one timeout after `since` (unless a look is already due).
    private func scheduleIdleCheck(_ context: ChannelHandlerContext, at since: NIODeadline) {
        guard let idleTimeout, idleCheck == nil else { return }
        idleCheck = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(deadline: since + idleTimeout) {
            self.idleCheck = nil
            self.idleCheckDue(context, idleTimeout)
        }
    }

    private func idleCheckDue(_ context: ChannelHandlerContext, _ idleTimeout: TimeAmount) {
        guard context.channel.isActive else { return }
        // A request read whole and still being answered: looked at again when its answer ends.
        if !reading, routed > 0 { return }
        if NIODeadline.now() >= lastActive + idleTimeout {
            context.close(promise: nil)
        } else {
            scheduleIdleCheck(context, at: lastActive)
        }
    }
}

/// Hummingbird's HTTP/1 channel with the `RevalidationHandler` in its pipeline, keeping the
/// idle timeout the inner channel was configured without.
struct RevalidatingHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let revalidator: Revalidator
    let idleTimeout: TimeAmount?
    /// Counts the connections against `--max-connections`.
    let gate: ConnectionGate

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let (revalidator, idleTimeout, gate) = (revalidator, idleTimeout, gate)
        let admitted = gate.enter()
        channel.closeFuture.whenComplete { _ in gate.leave() }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            // Not writable while anything waits for the socket (NIO's default: past 64 KiB), so
            // a download's next chunk is read only once the kernel has taken the last whole,
            // and `ChunkBudget` counts what downloads really hold.
            try channel.syncOptions?.setOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 1, high: 1))
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(RevalidationHandler(revalidator, idleTimeout: idleTimeout, pastCap: admitted ? nil : gate),
                                    position: .after(decoder.handler))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
