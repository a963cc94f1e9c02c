import Foundation
import GalleyCore

/// How `search` ranks and how much.
public struct SearchOptions: Sendable {
    /// Only this issue (global id or apple_id); an unknown issue is an error.
    public var issue: String?
    /// At most this many results, best first.
    public var limit = 20
    /// When more articles than this match, only the most recently imported `rankLimit` matches
    /// are ranked (BM25 costs about 1.5 µs a match, so ranking 30,000 takes 45 ms); nil ranks
    /// every match.
    public var rankLimit: Int? = SearchOptions.defaultRankLimit

    public static let defaultRankLimit = 5_000

    public init(issue: String? = nil, limit: Int = 20) {
        self.issue = issue
        self.limit = limit
    }
}

/// What `search` found.
public struct SearchResults: Sendable {
    /// Best first; ties in store order (import order, then zip order). Each has a snippet.
    public var articles: [StoredArticle]
    /// Set when more articles matched than `SearchOptions.rankLimit`: the ranking covered only
    /// the most recently imported this many matches.
    public var rankedOnlyMostRecent: Int?

    package init(articles: [StoredArticle], rankedOnlyMostRecent: Int? = nil) {
        self.articles = articles
        self.rankedOnlyMostRecent = rankedOnlyMostRecent
    }
}
