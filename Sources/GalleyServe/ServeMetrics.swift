import Foundation
import NIOConcurrencyHelpers
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Prometheus

/// Request counts and latency histograms for `/metrics`, in a registry this server owns (not
/// swift-metrics' process-wide bootstrap, so that two servers in one process, as in the tests,
/// count apart), and one access-log line per request through swift-log.
public final class ServeMetrics: @unchecked Sendable {
    /// Bodies above this many bytes are counted as they are sent (`AccessMiddleware`).
    static let countedFrom = 1 << 20

    let registry = PrometheusCollectorRegistry()
    /// Each series' counter and histogram, made once: the registry's own lookup validates and
    /// rebuilds names and labels, too much to do for every request. Behind `lock`.
    private var series: [String: Series] = [:]
    private let lock = NSLock()

    static let buckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
    ]

    /// Connections past `--max-connections`, answered 503 (`ConnectionGate`).
    let refusedConnections: Counter
    /// Downloads closed because their reader took no chunk within `--send-timeout`.
    let sendTimeouts: Counter
    /// Open connections, and the bytes of file chunks downloads hold (`ChunkBudget`), set
    /// when `/metrics` is read.
    let openConnections: Gauge
    let downloadBuffers: Gauge

    public init() {
        refusedConnections = registry.makeCounter(name: "galley_connections_refused_total",
                                                  help: "Connections past --max-connections, answered 503 and closed.")
        sendTimeouts = registry.makeCounter(name: "galley_send_timeouts_total",
                                            help: "Downloads closed because the reader took no chunk within --send-timeout.")
        openConnections = registry.makeGauge(name: "galley_connections_open", help: "Connections open now.")
        downloadBuffers = registry.makeGauge(name: "galley_download_buffer_bytes", help: "Bytes of file chunks downloads hold now.")
    }

    /// One series' counter and histogram.
    struct Series: Sendable {
        let count: Counter
        let duration: DurationHistogram

        func record(nanoseconds: Int64) {
            count.increment()
            duration.recordNanoseconds(nanoseconds)
        }
    }

    func record(route: String, method: HTTPRequest.Method, status: HTTPResponse.Status, nanoseconds: Int64) {
        series(route: route, method: method, status: status).record(nanoseconds: nanoseconds)
    }

    /// The series of a route, method and status, to record into without looking it up again.
    func series(route: String, method: HTTPRequest.Method, status: HTTPResponse.Status) -> Series {
        let key = "\(route) \(method.rawValue) \(status.code)"
        lock.lock()
        let found = series[key]
        lock.unlock()
        return found ?? make(key, route: route, method: method, status: status)
    }

    private func make(_ key: String, route: String, method: HTTPRequest.Method, status: HTTPResponse.Status) -> Series {
        let made = Series(
            count: registry.makeCounter(
                descriptor: MetricNameDescriptor(namespace: "galley", metricName: "http_requests", unitName: "total",
                                                 helpText: "HTTP requests answered, by route, method and status."),
                labels: [("route", route), ("method", method.rawValue), ("status", String(status.code))]),
            duration: registry.makeDurationHistogram(
                descriptor: MetricNameDescriptor(namespace: "galley", metricName: "http_request_duration", unitName: "seconds",
                                                 helpText: "Time to answer, until the response head is ready (downloads stream after)."),
                labels: [("route", route), ("method", method.rawValue)], buckets: Self.buckets))
        lock.lock()
        defer { lock.unlock() }
        series[key] = made
        return made
    }

    /// The exposition text (Prometheus text format 0.0.4).
    func exposition() -> [UInt8] { registry.emitToBuffer() }

    /// The access log's line for one request: `METHOD PATH STATUS BYTES TIMEms` (bytes `-` when
    /// the answer's length is not known when its head is ready). Made here for the router's
    /// requests and the early ones (`Revalidator`) alike.
    static func accessLine(_ method: HTTPRequest.Method, _ path: some StringProtocol, _ status: HTTPResponse.Status,
                           bytes: String?, nanoseconds: Int64) -> Logger.Message {
        "\(method.rawValue) \(path) \(status.code) \(bytes ?? "-") \(String(format: "%.1f", Double(nanoseconds) / 1e6))ms"
    }
}

/// Counts and times every request (until its head is ready), and logs it: method, path,
/// status, bytes, milliseconds, at `notice` (shown unless `serve --quiet`).
struct AccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServeMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            // Route misses and Hummingbird's own errors: counted with their status.
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            finish(request, context, status: status, bytes: nil, start: start)
            throw error
        }
        // Timed to the response's head: a download's streaming time is the client's pace, not
        // the server's. A large or streamed body (a download, a spooled listing) is logged
        // when it ends, with the bytes it handed to the connection, so a cut download is not
        // logged at its Content-Length. Smaller answers keep their byte-buffer fast path.
        let length = response.headers[.contentLength].flatMap(Int.init)
        let streams = length.map { $0 > ServeMetrics.countedFrom } ?? (response.status != .notModified && response.status != .noContent)
        guard streams, request.method != .head else {
            finish(request, context, status: response.status, bytes: response.headers[.contentLength], start: start)
            return response
        }
        let elapsed = Int64(DispatchTime.now().uptimeNanoseconds - start)
        let route = context.endpointPath ?? "unmatched"
        metrics.record(route: route, method: request.method, status: response.status, nanoseconds: elapsed)
        var counted = response
        let (body, logger, method, path, status) = (response.body, context.logger, request.method, request.uri.path, response.status)
        counted.body = ResponseBody(contentLength: length) { writer in
            let sent = SentBytes()
            do {
                try await body.write(writer.map { buffer in
                    sent.add(buffer.readableBytes)
                    return buffer
                })
                logger.notice(ServeMetrics.accessLine(method, path, status, bytes: String(sent.value), nanoseconds: elapsed))
            } catch {
                logger.notice(ServeMetrics.accessLine(method, path, status, bytes: String(sent.value), nanoseconds: elapsed))
                throw error
            }
        }
        return counted
    }

    private func finish(_ request: Request, _ context: Context, status: HTTPResponse.Status, bytes: String?, start: UInt64) {
        let elapsed = Int64(DispatchTime.now().uptimeNanoseconds - start)
        // The route's pattern, not the path: ids would make one series per issue.
        let route = context.endpointPath ?? "unmatched"
        metrics.record(route: route, method: request.method, status: status, nanoseconds: elapsed)
        context.logger.notice(ServeMetrics.accessLine(request.method, request.uri.path, status, bytes: bytes, nanoseconds: elapsed))
    }
}

/// The bytes a response body has handed to its connection so far.
final class SentBytes: Sendable {
    private let count = NIOLockedValueBox(0)
    func add(_ bytes: Int) { count.withLockedValue { $0 += bytes } }
    var value: Int { count.withLockedValue { $0 } }
}
