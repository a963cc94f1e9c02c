import Foundation
import GalleyCore
import GalleyKit

/// What a command does with a store.
public enum StoreAccess: Sendable {
    /// Queries: nothing is written, not even a migration when the store is up to date. A
    /// missing store is an error (queries never create one).
    case read
    /// Deletions, garbage collection: on a store that exists.
    case write
    /// Imports: writing, and creating the store when it does not exist yet.
    case create
}

/// What every store answers: the queries, the files, the packages and what sync recorded, all
/// read-only. `serve`'s answers, render from the store and the query commands need only this.
public protocol IssueReader: AnyObject, Sendable {
    /// Where the store lives, for messages.
    var root: URL { get }

    /// Whether its calls wait on the network (a database server): callers on an event loop
    /// (`serve`'s handlers) must make them from a thread pool. False for a local SQLite store,
    /// whose reads are short enough to make in place.
    var waitsOnNetwork: Bool { get }

    /// Every issue, newest first.
    func issues() throws -> [StoredIssue]
    /// Issues published before (`older`) or after the given one, nearest first.
    func issues(relativeTo id: String, older: Bool) throws -> [StoredIssue]
    /// One issue, by global id or apple_id.
    func issueSummary(_ id: String) throws -> StoredIssue
    /// One issue and its articles in order, read in one snapshot: `begin` gets the issue, then
    /// `body` each article (with its body HTML when `withBodies`), one at a time without the
    /// whole list in memory; an unknown id throws before `begin`. `issue(_:)` collects them.
    func eachIssueArticle(_ id: String, withBodies: Bool, begin: (StoredIssue) throws -> Void, _ body: (StoredArticle) throws -> Void) throws
    /// Articles in issue order (or newest first with `byDate`), filtered, handed to `body` one
    /// at a time without the whole list in memory; every filter applies, and an unknown issue
    /// throws (before the first) rather than meaning "all articles". `articles(_:)` collects them.
    func eachArticle(_ filter: ArticleFilter, _ body: (StoredArticle) throws -> Void) throws
    /// Up to `filter.limit` articles after `filter.after`, and the cursor of the next page.
    func articlePage(_ filter: ArticleFilter) throws -> ArticlePage
    /// One article and its assets (`newer` and `older` empty) to `begin`, then those of its
    /// issue's newer articles (nearest first) and older ones (nearest first) that `sides` asks
    /// for to `neighbour` one at a time, without the lists in memory, all read in one snapshot
    /// (a side not asked for is not read); an unknown id throws before `begin`.
    /// `article(_:issue:neighbours:)` collects them.
    func eachArticleNeighbour(
        _ id: String, issue: String?, sides: Set<ArticleNeighbour>, begin: (ArticleDetail) throws -> Void,
        _ neighbour: (ArticleNeighbour, StoredArticle) throws -> Void
    ) throws
    /// Assets of an issue, of an article, or of everything, optionally of one kind, in list
    /// order, or only the cover or the first image, handed to `body` one at a time without the
    /// whole list in memory; an unknown id throws (before the first). `assets(_:)` collects them.
    func eachAsset(_ filter: AssetFilter, _ body: (StoredAsset) throws -> Void) throws
    /// How many assets `eachAsset(filter)` hands over (its errors too).
    func assetCount(_ filter: AssetFilter) throws -> Int
    func search(_ text: String, options: SearchOptions) throws -> SearchResults

    /// A number that grows with every import or delete: equal revisions mean equal answers.
    func revision() throws -> Int64
    /// The revision as it was at most a millisecond ago, for a server that asks on every
    /// request: a commit shows in the answers that start a millisecond after it (a request in
    /// that millisecond could as well have come before the commit). Stores where asking costs
    /// nothing worth saving answer `revision()`.
    func recentRevision() throws -> Int64
    /// One file of an issue, by its name in the zip, with its recorded size and SHA-256.
    func file(_ name: String, issue: String) throws -> StoredFile
    /// The same file with a `path` this machine can read: itself, or (a store on object
    /// storage) a local copy, fetched once and checked against its SHA-256.
    func localFile(_ file: StoredFile) throws -> StoredFile

    /// Every issue's package (the zip it was imported from, kept), newest first; withheld
    /// ones too, with why.
    func packages() throws -> [StoredPackage]
    /// One issue's package, by apple_id or global id.
    func package(_ id: String) throws -> StoredPackage
    /// What `galley sync` recorded of the feed at `url` after its last complete sync, if any.
    func followedFeed(_ url: String) throws -> FollowedFeed?
    /// A package `galley sync` downloaded and the import gate refused, by SHA-256, if any.
    func refusedPackage(_ sha256: String) throws -> RefusedPackage?
    /// Every followed feed and every refused package, for `store copy`.
    func followedFeeds() throws -> [FollowedFeed]
    func refusedPackages() throws -> [RefusedPackage]
    /// Every independent article, newest first (undated last), then by global id.
    func independentArticles() throws -> [IndependentArticle]
    /// Integrity: the database, every file with its size and checksum, no orphans.
    func check() throws -> StoreCheck
}

/// The store's operations, as the CLI (and `serve` and `sync`) reach them: an `IssueReader`
/// that also writes, so that a second backend (PostgreSQL) slots in behind one protocol and
/// runs the same conformance tests. `SQLiteStore` (a folder) and `PostgresStore` (a database
/// and a blob store) implement it.
///
/// Every write either does all of its work or none of it: a failed import leaves the store as
/// it was. Unknown ids are `GalleyError`s naming the id and a command that lists the valid ones.
public protocol IssueStore: IssueReader {

    /// Imports one zip (`ImportJob`): the checks the job's container did not have yet, the
    /// versions, the pass that stages its files, and the commit, all or nothing (see
    /// `SQLiteStore.importZip(_:)` for the guarantees). The result's warnings start with the
    /// container's.
    func importZip(_ job: ImportJob) throws -> ImportResult
    /// Records a complete sync of a feed.
    func recordFollowedFeed(_ feed: FollowedFeed) throws
    /// Records a refused package, so that no sync downloads it again.
    func recordRefusedPackage(_ refused: RefusedPackage) throws
    /// Raises an issue's feed version to at least `version` (the issue's and the counter that
    /// outlives deletions), so that a store copied from another never offers apps a version
    /// they have seen go by. Never lowers it.
    func raisePackageVersion(_ appleID: String, to version: Int64) throws

    /// Merges independent articles by global id: new ones added, changed ones updated, the
    /// same ones untouched (no write at all when nothing changed), others kept.
    func mergeIndependentArticles(_ articles: [IndependentArticle], source: String) throws -> ArticleMerge

    /// Removes an issue's rows and files; returns what was removed.
    func delete(_ id: String) throws -> StoredIssue
    /// Removes what interrupted imports left behind; returns what was removed.
    func collectGarbage() throws -> [String]
    /// After a load of many issues at once (several zips in one import, a store copy): brings
    /// the database's planner statistics and indexes up to date, so the next queries are planned
    /// and answered for what the store now holds rather than what it held before.
    func settleAfterLoad() throws
}

extension IssueReader {
    /// One article, its assets, and the newer and older articles of its issue that `neighbours`
    /// asks for (`eachArticleNeighbour` collected; none: the article alone, for what shows no
    /// neighbours).
    public func article(_ id: String, issue: String?, neighbours: Set<ArticleNeighbour> = ArticleNeighbour.both) throws -> ArticleDetail {
        var detail: ArticleDetail?
        try eachArticleNeighbour(id, issue: issue, sides: neighbours, begin: { detail = $0 }) { side, article in
            switch side {
            case .newer: detail?.newer.append(article)
            case .older: detail?.older.append(article)
            }
        }
        guard let detail else { throw GalleyError("no article `\(id)` in the store", id: .notFound) }
        return detail
    }

    /// One issue with its articles in order (`eachIssueArticle`'s, without bodies, as one list).
    public func issue(_ id: String) throws -> (issue: StoredIssue, articles: [StoredArticle]) {
        var issue: StoredIssue?
        var articles: [StoredArticle] = []
        try eachIssueArticle(id, withBodies: false, begin: { issue = $0 }) { articles.append($0) }
        guard let issue else { throw GalleyError("the store gave no issue `\(id)`", id: .storeFailed) }
        return (issue, articles)
    }

    /// `eachArticle`'s articles as one list.
    public func articles(_ filter: ArticleFilter) throws -> [StoredArticle] {
        var articles: [StoredArticle] = []
        try eachArticle(filter) { articles.append($0) }
        return articles
    }

    /// `eachAsset`'s assets as one list.
    public func assets(_ filter: AssetFilter) throws -> [StoredAsset] {
        var assets: [StoredAsset] = []
        try eachAsset(filter) { assets.append($0) }
        return assets
    }

    /// Counted as they are read (no list); a backend with a cheaper count implements it.
    public func assetCount(_ filter: AssetFilter) throws -> Int {
        var count = 0
        try eachAsset(filter) { _ in count += 1 }
        return count
    }

    /// Search with the default options (20 results, the default rank limit).
    public func search(_ text: String) throws -> SearchResults { try search(text, options: SearchOptions()) }

    public var waitsOnNetwork: Bool { false }
    public func recentRevision() throws -> Int64 { try revision() }
    public func localFile(_ file: StoredFile) throws -> StoredFile { file }
}
