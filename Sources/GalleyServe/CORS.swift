import HTTPTypes
import Hummingbird

/// CORS for browser readers of the API. Written here rather than Hummingbird's
/// `CORSMiddleware`, which sends `Access-Control-Expose-Headers` only on the preflight, where
/// browsers ignore it (the Fetch standard reads it on the actual response): a page could then
/// never read `ETag`, `Link` or `Content-Version`.
struct CORSPolicy<Context: RequestContext>: RouterMiddleware {
    /// Exact origins (`https://reader.example.com`), or `*` for any.
    let origins: [String]
    let exposed: String
    let allowedHeaders: String
    let allowedMethods = "GET, HEAD, OPTIONS, POST, DELETE"

    init(origins: [String], exposed: [String], allowedHeaders: [HTTPField.Name]) {
        self.origins = origins
        self.exposed = exposed.joined(separator: ", ")
        self.allowedHeaders = allowedHeaders.map(\.canonicalName).joined(separator: ", ")
    }

    /// What `Access-Control-Allow-Origin` says to this origin, or nil (not allowed).
    func allowed(_ origin: String) -> String? {
        if origins.contains("*") { return "*" }
        return origins.contains(origin) ? origin : nil
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin] else { return try await next(request, context) }
        let allow = allowed(origin)
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers: HTTPFields = [.vary: "Origin"]
            if let allow {
                headers[.accessControlAllowOrigin] = allow
                headers[.accessControlAllowMethods] = allowedMethods
                headers[.accessControlAllowHeaders] = allowedHeaders
                headers[.accessControlMaxAge] = "600"
            }
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers[values: .vary].append("Origin")
        if let allow {
            response.headers[.accessControlAllowOrigin] = allow
            response.headers[.accessControlExposeHeaders] = exposed
        }
        return response
    }
}
