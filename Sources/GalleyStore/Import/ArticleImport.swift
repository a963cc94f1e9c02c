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
    /// The merged items whose bodies lost markup (`KeyMap.Sanitized`).
    public var sanitized: [KeyMap.Sanitized]

    public init(merge: ArticleMerge, mapped: KeyMap.Result) {
        added = merge.added
        updated = merge.updated
        unchanged = merge.unchanged
        skipped = mapped.skipped
        sanitized = mapped.sanitized
    }

    /// A sanitized item as a note line: which item, and what its body lost.
    public static func note(_ sanitized: KeyMap.Sanitized, source: String) -> String {
        "\(source)#/\(sanitized.index): item \(sanitized.index) (global_id \(sanitized.globalID)): its body was stored without "
            + sanitized.removed.joined(separator: ", ") + " (a reader's article may not hold them)"
    }

    /// A skipped item as an error: what, where (the item and pointer), and what to do.
    public static func error(_ skipped: KeyMap.Skipped, source: String) -> GalleyError {
        let id = skipped.globalID.map { " (global_id \($0))" } ?? ""
        return GalleyError("item \(skipped.index)\(id): \(skipped.message)", id: .problems,
                           path: "\(source)#/\(skipped.index)\(skipped.pointer.map { $0.hasPrefix("/") ? $0 : "" } ?? "")",
                           hint: "The item was skipped and the others merged; fix the feed, or the key map's rule for `\(skipped.target)`.")
    }
}

/// A file of articles (Galley's own `{"articles": [...]}`, or a foreign feed read through a key
/// map), read and mapped before any store is opened: a file that cannot be read, is not JSON or
/// has no array of items is refused without creating or touching a store.
public struct ArticlesFile: Sendable {
    public var path: String
    public var mapped: KeyMap.Result

    public init(path: String, map: KeyMap? = nil) throws {
        let hint = "Give a JSON file: {\"articles\": [...]}, or a foreign feed (JSON, RSS or Atom) with --key-map."
        // A foreign feed may be RSS or Atom; Galley's own is JSON.
        let document = try map == nil ? InputFile.json(path, what: "the articles file", hint: hint)
            : XMLFeed.file(path, what: "the articles file", hint: hint)
        self.path = path
        mapped = try (map ?? KeyMap.native).map(document, source: path)
    }
}

extension IssueStore {
    /// `galley import --articles FILE`: the file's articles merged into the independent
    /// articles.
    public func importArticles(_ file: ArticlesFile) throws -> ArticlesSummary {
        ArticlesSummary(merge: try mergeIndependentArticles(file.mapped.articles, source: file.path), mapped: file.mapped)
    }
}
