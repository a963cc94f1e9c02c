import Foundation
import GalleyCore
import GalleyKit
import GalleyStore
import Hummingbird

extension GalleyServer {
    /// An article as a page: the semantic page `galley render --page` makes, its pictures and
    /// media from this server's downloads, its body sanitised as render sanitises it.
    func pageRoutes(_ routes: ResourceRoutes) {
        routes.get("articles/{id}/page") { request, context, _ in
            var options = RenderOptions()
            options.page = true
            let issue = request.uri.queryParameters["issue"].map(String.init)
            let rendered = try Renderer(options: options).renderArticle(
                fromStore: self.store, id: try context.parameters.require("id"), issue: issue, outputDirectory: URL(fileURLWithPath: "/"),
                issueAssetBase: { "/issues/\(HTMLText.urlPath($0))/files/" })
            return .page(html: rendered.html)
        }
    }
}
