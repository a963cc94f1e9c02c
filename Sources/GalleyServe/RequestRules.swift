import Foundation
import GalleyCore
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers

/// Every route's path pattern and methods, as the routes are added: what a request of another
/// method is told it may use (405 with `Allow`).
final class RouteTable: Sendable {
    private let entries = NIOLockedValueBox<[(path: RouterPath, methods: Set<HTTPRequest.Method>)]>([])

    func add(_ path: RouterPath, _ method: HTTPRequest.Method) {
        entries.withLockedValue { entries in
            if let index = entries.firstIndex(where: { $0.path == path }) {
                entries[index].methods.insert(method)
            } else {
                entries.append((path, [method]))
            }
        }
    }

    /// The methods some route takes at `path` (HEAD wherever GET is), sorted; empty: no route.
    func methods(at path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var found = Set<HTTPRequest.Method>()
        entries.withLockedValue { entries in
            for entry in entries where entry.path.count == segments.count
                && zip(entry.path, segments).allSatisfy({ element, segment in Self.matches(element, segment) }) {
                found.formUnion(entry.methods)
            }
        }
        if found.contains(.get) { found.insert(.head) }
        return found.map(\.rawValue).sorted()
    }

    /// Whether one segment of a request path fits one element of a pattern: the routes use
    /// literal segments and `{name}` captures only.
    static func matches(_ element: RouterPath.Element, _ segment: Substring) -> Bool {
        let text = element.description
        if text.hasPrefix("{") && text.hasSuffix("}") || text.hasPrefix(":") { return true }
        return text == segment
    }
}

/// What every request meets before its route: RFC 9112's Host rule (exactly one), and route
/// misses in the one JSON error shape (404, or 405 with `Allow` when the path has routes for
/// other methods) instead of Hummingbird's empty answers.
struct RequestRules: RouterMiddleware {
    typealias Context = ServeContext
    let server: GalleyServer
    let table: RouteTable

    static let host = HTTPField.Name("Host")!

    func handle(_ request: Request, context: ServeContext, next: (Request, ServeContext) async throws -> Response) async throws -> Response {
        // The conversion to Swift HTTP Types makes the first Host the authority and keeps any
        // other as a field.
        guard request.head.authority != nil, request.headers[Self.host] == nil else {
            return server.errorResponse(
                GalleyError("a request needs exactly one Host header", id: .usage,
                            hint: "Send one Host naming the server, as HTTP/1.1 requires (RFC 9112, section 3.2)."),
                status: .badRequest, version: nil)
        }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound && context.endpointPath == "NotFound" {
            let allowed = table.methods(at: request.uri.path)
            guard !allowed.isEmpty else {
                return server.errorResponse(
                    GalleyError("no resource at `\(request.uri.path)`", id: .notFound,
                                hint: "GET /openapi.yaml lists every route; the JSON resources are also under /v1 and /v2."),
                    status: .notFound, version: nil)
            }
            var response = server.errorResponse(
                GalleyError("`\(request.method.rawValue)` is not a method of `\(request.uri.path)`", id: .usage,
                            hint: "It takes \(allowed.joined(separator: ", ")) (the Allow header lists them)."),
                status: .methodNotAllowed, version: nil)
            response.headers[.allow] = allowed.joined(separator: ", ")
            return response
        }
    }
}
