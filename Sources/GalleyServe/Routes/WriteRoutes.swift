import Foundation
import Hummingbird

extension GalleyServer {
    /// Uploads and deletions behind the token (`GalleyServer+Writes.swift`).
    func writeRoutes(_ routes: ResourceRoutes) {
        routes.on("issues", method: .post) { request, context in await self.upload(request, context) }
        routes.on("issues/{id}", method: .delete) { request, context in await self.remove(request, context) }
    }
}
