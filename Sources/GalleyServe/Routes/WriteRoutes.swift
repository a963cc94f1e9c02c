import Foundation
import Hummingbird

extension GalleyServer {
    /// Uploads and deletions behind the token (`GalleyServer+Writes.swift`).
    func writeRoutes(_ routes: ResourceRoutes) {
        routes.collection.post("issues") { request, context in await self.upload(request, context) }
        routes.collection.delete("issues/{id}") { request, context in await self.remove(request, context) }
    }
}
