import Foundation
import GalleyCore
import GalleyStore
import Hummingbird

extension GalleyServer {
    /// Search, as `galley search`.
    func searchRoutes(_ routes: ResourceRoutes) {
        routes.get("search") { request, _, _ in
            guard let text = request.uri.queryParameters["q"], !text.isEmpty else {
                throw GalleyError("give the words to search for in `q`", id: .usage, hint: "For example /search?q=lighthouse.")
            }
            var options = SearchOptions()
            options.issue = request.uri.queryParameters["issue"].map(String.init)
            let results = try self.store.search(String(text), options: options)
            return .json(SearchAnswer(query: String(text), items: results.articles, rankedOnlyMostRecent: results.rankedOnlyMostRecent))
        }
    }
}
