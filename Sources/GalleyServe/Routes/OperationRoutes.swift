import Foundation
import GalleyCore
import HTTPTypes
import Hummingbird
import NIOCore

extension GalleyServer {
    /// What operators and tools ask: health, metrics, the contract; at the root only.
    func operationRoutes(_ noted: ResourceRoutes) -> RouteCollection<ServeContext> {
        let routes = noted.collection
        noted.on("healthz", method: .get) { _, _ in await self.health() }
        // Browsers ask for it on every page: nothing, and no 404 in their consoles.
        noted.on("favicon.ico", method: .get) { _, _ in Response(status: .noContent, headers: [.cacheControl: "public, max-age=86400"]) }
        noted.on("openapi.yaml", method: .get) { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml", .cacheControl: "no-cache"],
                     body: ResponseBody(byteBuffer: ByteBuffer(bytes: PackageResources.openapi_yaml)))
        }
        noted.on("metrics", method: .get) { _, _ in
            self.metrics.openConnections.set(Int64(self.gate.openNow))
            self.metrics.downloadBuffers.set(Int64(self.sending.budget.inUse))
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                     body: ResponseBody(byteBuffer: ByteBuffer(bytes: self.metrics.exposition())))
        }
        return routes
    }
}
