import Foundation
import HTTPTypes
import Hummingbird

extension GalleyServer {
    /// An issue's files, by name and by content, and its kept zip, with ranges
    /// (`GalleyServer+Downloads.swift`), for GET and HEAD (which reads nothing of the file).
    func downloadRoutes(_ routes: ResourceRoutes) {
        for method in [HTTPRequest.Method.get, .head] {
            for path in ["issues/{id}/files/{name}", "issues/{id}/files/{name}/{file}"] {
                routes.on(path, method: method) { request, context in try await self.download(request, context) }
            }
            routes.on("packages/{id}/{file}", method: method) { request, context in try await self.packageDownload(request, context) }
        }
    }
}
