import Foundation
import HTTPTypes
import Hummingbird

extension GalleyServer {
    /// An issue's files and its kept zip, with ranges (`GalleyServer+Downloads.swift`), for GET
    /// and HEAD.
    func downloadRoutes(_ routes: ResourceRoutes) {
        for method in [HTTPRequest.Method.get, .head] {
            routes.collection.on(RouterPath("issues/{id}/files/{name}"), method: method) { request, context in
                try await self.download(request, context)
            }
            routes.collection.on(RouterPath("packages/{id}/{file}"), method: method) { request, context in
                try await self.packageDownload(request, context)
            }
        }
    }
}
