import Foundation
import GalleyCore
import GalleyStore
import Hummingbird

extension GalleyServer {
    /// The articles: a page of them, filtered, and one article with its assets and neighbours.
    func articleRoutes(_ routes: ResourceRoutes) {
        routes.get("articles") { request, _, version in
            var filter = try Self.articleFilter(request)
            filter.issue = request.uri.queryParameters["issue"].map(String.init)
            filter.withBodies = version.listsBodies
            return Self.page(try self.store.articlePage(filter), request: request)
        }
        // Unbounded: `newer` and `older` list the rest of the article's issue, written item by
        // item into the answer.
        // `?issue=` names the issue when several hold an article with this id.
        routes.get("articles/{id}", unbounded: true) { request, context, _ in
            let id = try context.parameters.require("id")
            let issue = request.uri.queryParameters["issue"].map(String.init)
            return .written(try JSONBody(memoryLimit: self.cache.largestKept, folder: self.spoolFolder) { spool in
                try self.store.writeArticleDocument(id, issue: issue, adjust: { $0.assets = $0.assets.map(Self.served) }, write: { spool.write($0) })
            }.content)
        }
    }

    /// A page of articles, with the next page's address in its body and its `Link` header.
    static func page(_ page: ArticlePage, request: Request) -> Representation {
        let answer = PageAnswer(page, request: request)
        return .json(answer, next: answer.next)
    }
}
