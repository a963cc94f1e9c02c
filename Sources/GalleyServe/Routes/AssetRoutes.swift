import Foundation
import GalleyCore
import GalleyStore
import Hummingbird

extension GalleyServer {
    /// The asset queries of Dumpling's Asset class and `galley assets`: by issue, article and
    /// kind, an article's playlist, an issue's cover, the first image, and counts.
    func assetRoutes(_ routes: ResourceRoutes) {
        routes.get("assets", unbounded: true) { request, _, _ in
            let query = request.uri.queryParameters
            func flag(_ name: String) throws -> Bool { try Self.flag(request, name) }
            var filter = AssetFilter()
            filter.issue = query["issue"].map(String.init)
            filter.article = query["article"].map(String.init)
            if let kind = query["kind"] {
                guard let parsed = MediaKind(rawValue: String(kind)) else {
                    throw GalleyError("`kind` must be image, sound or video", id: .usage, hint: "For example /assets?kind=image.")
                }
                filter.kind = parsed
            }
            if try flag("playlist") {
                guard filter.kind == nil || filter.kind == .sound else {
                    throw GalleyError("a playlist is sounds: `playlist` takes no other `kind`", id: .usage,
                                      hint: "For example /assets?article=ID&playlist=true.")
                }
                filter.kind = .sound
            }
            let cover = try flag("cover")
            if cover {
                guard filter.issue != nil, filter.article == nil else {
                    throw GalleyError("`cover` is an issue's: give `issue`, not `article`", id: .usage,
                                      hint: "For example /assets?issue=com.example.harbour.2026-01&cover=true.")
                }
                filter.issueOwn = true
            }
            filter.first = try cover || flag("first")
            if try flag("count") { return .json(AssetCount(count: try self.store.assetCount(filter))) }
            // Written as the store reads the rows, never the whole list in memory.
            return .written(try JSONBody(key: "items", memoryLimit: self.cache.largestKept, folder: self.spoolFolder) { send in
                try self.store.eachAsset(filter) { try send(Self.served($0)) }
            }.content)
        }
    }
}
