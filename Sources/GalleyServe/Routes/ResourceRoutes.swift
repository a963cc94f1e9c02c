import Foundation
import GalleyCore
import HTTPTypes
import Hummingbird

/// What a resource route answers, before `GalleyServer.represent` makes it a 200's bytes: one
/// closed choice instead of marker types found by casting.
enum Representation {
    /// A value encoded as JSON; `next`, the next page's address, goes out as `Link: rel="next"`.
    case json(any Encodable, next: String? = nil)
    /// A JSON document the route wrote itself as the store read its rows (`JSONBody`).
    case written(AnswerSpool.Content)
    /// An HTML page, sent with the page's own policy.
    case page(html: String)
}

/// One resource's routes under one path prefix (`/`, `/v1`, `/v2`), as a Hummingbird route
/// collection the router adds at that prefix. `get` answers through `GalleyServer.resource`
/// (versions, strong tags, 304s, the answer cache), so a resource says only what it answers.
struct ResourceRoutes {
    let server: GalleyServer
    /// The version a prefix fixes; nil at `/`, where `Accept-Version` chooses.
    let version: APIVersion?
    /// Where each route's path and method is noted (405's `Allow`).
    let table: RouteTable
    let collection = RouteCollection(context: ServeContext.self)

    /// The path as the router sees it: under this collection's prefix.
    func noted(_ path: String, _ method: HTTPRequest.Method) -> RouterPath {
        let routerPath = RouterPath(path)
        table.add(RouterPath(version?.prefix ?? "").appendingPath(routerPath), method)
        return routerPath
    }

    /// Any route: `handler` answers `method` at `path`.
    func on(_ path: String, method: HTTPRequest.Method,
            _ handler: @escaping @Sendable (Request, ServeContext) async throws -> Response) {
        collection.on(noted(path, method), method: method, use: handler)
    }

    /// A JSON (or page) resource at `path`. `signed`: carries `Galley-Signature` when the server
    /// has a key. `unbounded`: the answer's size grows with the store, so it is made off the
    /// event loops (`GalleyServer.storeCall`).
    func get(_ path: String, signed: Bool = false, unbounded: Bool = false,
             _ answer: @escaping @Sendable (Request, ServeContext, APIVersion) throws -> Representation) {
        let (server, fixed) = (server, version)
        collection.get(noted(path, .get)) { request, context in
            try await server.resource(request, version: fixed, context, signed: signed, unbounded: unbounded) { version in
                // An empty value names nothing (`?issue=` is no issue, not every one), and a
                // parameter given twice would have one of its values silently ignored.
                var seen = Set<Substring>()
                for (name, value) in request.uri.queryParameters {
                    guard !value.isEmpty else { throw GalleyError("`\(name)` is empty", id: .usage, hint: "Give it a value, or leave it out.") }
                    guard seen.insert(name).inserted else {
                        throw GalleyError("`\(name)` is given more than once", id: .usage, hint: "Give each parameter once.")
                    }
                }
                return try answer(request, context, version)
            }
        }
    }
}
