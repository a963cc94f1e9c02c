import Foundation
import GalleyCore
import GalleyStore
import Hummingbird

extension GalleyServer {
    /// The issues: the list (and the issues before or after one), one issue with its articles,
    /// and an issue's articles a page at a time.
    func issueRoutes(_ routes: ResourceRoutes) {
        routes.get("issues") { request, _, _ in
            // As `galley issues --older-than/--newer-than`: the issues published before or after
            // one, nearest first (an app's "previous issue" and "next issue").
            let query = request.uri.queryParameters
            let older: Substring? = query["older_than"], newer: Substring? = query["newer_than"]
            switch (older, newer) {
            case (let older?, nil): return .json(ListAnswer(items: try self.store.issues(relativeTo: String(older), older: true)))
            case (nil, let newer?): return .json(ListAnswer(items: try self.store.issues(relativeTo: String(newer), older: false)))
            case (nil, nil): return .json(ListAnswer(items: try self.store.issues()))
            case (_?, _?):
                throw GalleyError("give `older_than` or `newer_than`, not both", id: .usage,
                                  hint: "For example /issues?older_than=com.example.harbour.2026-02.")
            }
        }
        routes.get("issues/{id}", unbounded: true) { _, context, version in
            // The issue and its articles from one snapshot, written into the answer as the rows
            // are read (as `/assets`): {"articles": [...], "issue": {...}}.
            let id = try context.parameters.require("id")
            var issue: StoredIssue?
            return .written(try JSONBody(key: "articles", memoryLimit: self.cache.largestKept, folder: self.spoolFolder,
                                         trailing: { issue.map { [("issue", $0)] } ?? [] }) { send in
                try self.store.eachIssueArticle(id, withBodies: version.listsBodies, begin: { issue = $0 }, send)
            }.content)
        }
        routes.get("issues/{id}/articles") { request, context, version in
            var filter = try Self.articleFilter(request)
            filter.issue = try context.parameters.require("id")
            filter.withBodies = version.listsBodies
            return Self.page(try self.store.articlePage(filter), request: request)
        }
    }
}
