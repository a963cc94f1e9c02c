import Foundation
import GalleyCore
import GalleyFormats

/// What merging a feed (or file) of articles did: `galley sync` of an article feed and
/// `galley import --articles` (docs/json/import-articles.schema.json).
public struct ArticlesSummary: Sendable, Encodable {
    public var added: [String]
    public var updated: [String]
    public var unchanged: Int
    public var skipped: [KeyMap.Skipped]

    public init(merge: ArticleMerge, skipped: [KeyMap.Skipped]) {
        added = merge.added
        updated = merge.updated
        unchanged = merge.unchanged
        self.skipped = skipped
    }

    /// A skipped item as an error: what, where (the item and pointer), and what to do.
    public static func error(_ skipped: KeyMap.Skipped, source: String) -> GalleyError {
        let id = skipped.globalID.map { " (global_id \($0))" } ?? ""
        return GalleyError("item \(skipped.index)\(id): \(skipped.message)", id: .problems,
                           path: "\(source)#/\(skipped.index)\(skipped.pointer.map { $0.hasPrefix("/") ? $0 : "" } ?? "")",
                           hint: "The item was skipped and the others merged; fix the feed, or the key map's rule for `\(skipped.target)`.")
    }
}

extension IssueStore {
    /// `galley import --articles FILE`: the file's articles (Galley's own `{"articles": [...]}`,
    /// or a foreign feed read through `map`) merged into the independent articles.
    public func importArticles(fileAt path: String, map: KeyMap? = nil) throws -> ArticlesSummary {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GalleyError("cannot read the articles file", id: FileManager.default.fileExists(atPath: path) ? .inputUnreadable : .inputNotFound,
                              path: path, hint: "Give a JSON file: {\"articles\": [...]}, or a foreign feed with --key-map.")
        }
        guard let text = String(data: data, encoding: .utf8), let document = JSONValue(parsing: text) else {
            throw GalleyError("the articles file is not JSON", id: .inputUnreadable, path: path,
                              hint: "Give a JSON file: {\"articles\": [...]}, or a foreign feed with --key-map.")
        }
        let mapped = try (map ?? KeyMap.native).map(document, source: path)
        return ArticlesSummary(merge: try mergeIndependentArticles(mapped.articles, source: path), skipped: mapped.skipped)
    }
}
