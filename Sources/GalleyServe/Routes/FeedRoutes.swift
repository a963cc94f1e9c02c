import Foundation
import GalleyCore
import GalleyStore
import Hummingbird

extension GalleyServer {
    /// The package feed reader apps poll (`/feed`, signed when the server has a key), one
    /// package as the Drupal packager answered it, and the independent articles as a feed.
    func feedRoutes(_ routes: ResourceRoutes) {
        routes.get("feed", signed: true) { request, context, _ in
            let base = self.baseURL(request, context)
            return .json(FeedAnswer(revision: try self.store.revision(),
                                    packages: try self.store.packages().filter { $0.withheld == nil }.map { PackageAnswer($0, base: base) }))
        }
        // Independent articles as a feed `galley sync` follows (merged by global id).
        routes.get("independent-articles", signed: true) { _, _, _ in
            .json(IndependentAnswer(revision: try self.store.revision(), articles: try self.store.independentArticles()))
        }
        routes.get("packages/{id}", signed: true) { request, context, _ in
            let package = try self.store.package(try context.parameters.require("id"))
            guard package.withheld == nil else { throw Self.withheld(package) }
            return .json(PackageAnswer(package, base: self.baseURL(request, context)))
        }
    }
}
