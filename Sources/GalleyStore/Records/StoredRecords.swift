import Foundation
import GalleyCore

/// An issue as the store lists it. The store's records decode from columns named by their
/// coding keys (`SQLiteStore.issueColumns` and friends alias them), which are also their JSON keys.
public struct StoredIssue: Sendable, Codable {
    public var globalID: String
    public var appleID: String
    public var title: String
    public var displayDate: String
    public var publishDate: String
    public var lastUpdated: String
    public var articles: Int

    package enum CodingKeys: String, CodingKey {
        case title, articles
        case globalID = "global_id"
        case appleID = "apple_id"
        case displayDate = "display_date"
        case publishDate = "publish_date"
        case lastUpdated = "last_updated"
    }

    /// The store's JSON (docs/json.md): ISO 8601 dates, not the wire format's forms.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(globalID, forKey: .globalID)
        try container.encode(appleID, forKey: .appleID)
        try container.encode(title, forKey: .title)
        try container.encode(displayDate, forKey: .displayDate)
        try container.encode(DumplingDate.isoDay(publishDate: publishDate), forKey: .publishDate)
        try container.encode(DumplingDate.rfc3339(lastUpdated), forKey: .lastUpdated)
        try container.encode(articles, forKey: .articles)
    }

    package init(globalID: String, appleID: String, title: String, displayDate: String, publishDate: String, lastUpdated: String, articles: Int) {
        self.globalID = globalID
        self.appleID = appleID
        self.title = title
        self.displayDate = displayDate
        self.publishDate = publishDate
        self.lastUpdated = lastUpdated
        self.articles = articles
    }
}

/// An article as listings show it.
public struct StoredArticle: Sendable, Codable {
    public var globalID: String
    public var issueGlobalID: String
    public var placement: Int
    public var title: String
    public var dek: String
    public var section: String
    public var type: String
    public var author: String
    public var date: String
    public var featured: Bool
    /// Comma-separated, as the wire format has them.
    public var keywords: String
    /// Search results only: where the body matched, one line of plain text.
    public var snippet: String?
    /// Search results only: the matched words in the title and the snippet.
    public var highlights: [SearchHighlight]?
    /// Listings with `ArticleFilter.withBodies` only: the body HTML.
    public var body: String?

    package enum CodingKeys: String, CodingKey {
        case placement, title, dek, section, type, author, date, featured, keywords, snippet, highlights, body
        case globalID = "global_id"
        case issueGlobalID = "issue_global_id"
    }

    /// The keywords one by one, as the JSON gives them.
    public var keywordList: [String] {
        keywords.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The store's JSON (docs/json.md): keywords as an array, the date in ISO 8601.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(globalID, forKey: .globalID)
        try container.encode(issueGlobalID, forKey: .issueGlobalID)
        try container.encode(placement, forKey: .placement)
        try container.encode(title, forKey: .title)
        try container.encode(dek, forKey: .dek)
        try container.encode(section, forKey: .section)
        try container.encode(type, forKey: .type)
        try container.encode(author, forKey: .author)
        try container.encode(DumplingDate.rfc3339(date), forKey: .date)
        try container.encode(featured, forKey: .featured)
        try container.encode(keywordList, forKey: .keywords)
        try container.encodeIfPresent(snippet, forKey: .snippet)
        try container.encodeIfPresent(highlights, forKey: .highlights)
        try container.encodeIfPresent(body, forKey: .body)
    }

    package init(globalID: String, issueGlobalID: String, placement: Int, title: String, dek: String, section: String, type: String, author: String, date: String, featured: Bool, keywords: String, snippet: String? = nil, highlights: [SearchHighlight]? = nil, body: String? = nil) {
        self.globalID = globalID
        self.issueGlobalID = issueGlobalID
        self.placement = placement
        self.title = title
        self.dek = dek
        self.section = section
        self.type = type
        self.author = author
        self.date = date
        self.featured = featured
        self.keywords = keywords
        self.snippet = snippet
        self.highlights = highlights
        self.body = body
    }
}

/// A matched word of a search result: in which field, from which offset, how long, counted in
/// Unicode scalars (code points), as Python's and Swift's unicodeScalars index strings.
public struct SearchHighlight: Sendable, Codable, Hashable {
    public enum Field: String, Sendable, Codable {
        case title, snippet
    }

    public var field: Field
    public var start: Int
    public var length: Int

    public init(field: Field, start: Int, length: Int) {
        (self.field, self.start, self.length) = (field, start, length)
    }
}

public struct ArticleFilter: Sendable {
    public var issue: String?
    public var type: String?
    public var excludeType: String?
    public var featured = false
    public var keyword: String?
    public var byDate = false
    public var limit: Int?
    public var page = 0
    /// Each article's body too (`serve`'s version 1 lists).
    public var withBodies = false
    /// Only articles after this one in the listing's order: a cursor from `ArticlePage.next`
    /// (keyset paging: an issue imported between two pages causes no duplicate and no gap).
    public var after: String?

    public init(
        issue: String? = nil, type: String? = nil, excludeType: String? = nil, featured: Bool = false,
        keyword: String? = nil, byDate: Bool = false, limit: Int? = nil, page: Int = 0
    ) {
        (self.issue, self.type, self.excludeType, self.featured) = (issue, type, excludeType, featured)
        (self.keyword, self.byDate, self.limit, self.page) = (keyword, byDate, limit, page)
    }
}

/// One page of a listing, and the cursor of the next (nil on the last page).
public struct ArticlePage: Sendable {
    public var items: [StoredArticle]
    public var next: String?

    package init(items: [StoredArticle], next: String? = nil) {
        self.items = items
        self.next = next
    }
}

/// What `store check` finds.
public struct StoreCheck: Sendable, Codable {
    public var integrity: String
    public var issues: Int
    public var files: Int
    public var problems: [String]

    package init(integrity: String, issues: Int, files: Int, problems: [String]) {
        self.integrity = integrity
        self.issues = issues
        self.files = files
        self.problems = problems
    }
}

/// An asset as the store lists it, with the path of its file in the store.
public struct StoredAsset: Sendable, Codable {
    public var globalID: String
    public var issueGlobalID: String
    public var articleGlobalID: String?
    public var kind: String
    public var placement: Int
    public var caption: String
    public var credit: String
    public var fileName: String
    public var crop350: String
    public var path: String
    public var metadata: String?
    /// The SHA-256 of the asset's file, nil when the store has no file of that name (`store
    /// check` reports it). Not in the JSON: `serve` puts it in the file's address.
    public var sha256: String?

    package enum CodingKeys: String, CodingKey {
        case kind, placement, caption, credit, path, metadata, sha256
        case globalID = "global_id"
        case issueGlobalID = "issue_global_id"
        case articleGlobalID = "article_global_id"
        case fileName = "file_name"
        case crop350 = "crop_350_350"
    }

    /// The store's JSON (docs/json.md): metadata as an object (`{}` when there is none).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(globalID, forKey: .globalID)
        try container.encode(issueGlobalID, forKey: .issueGlobalID)
        try container.encode(articleGlobalID, forKey: .articleGlobalID)
        try container.encode(kind, forKey: .kind)
        try container.encode(placement, forKey: .placement)
        try container.encode(caption, forKey: .caption)
        try container.encode(credit, forKey: .credit)
        try container.encode(fileName, forKey: .fileName)
        try container.encode(crop350, forKey: .crop350)
        try container.encode(path, forKey: .path)
        try container.encode(JSONValueBox(metadataValue), forKey: .metadata)
    }

    /// The metadata as a JSON value: the stored text parsed, an empty object when there is none
    /// (or, should the stored text not parse, that text as a string).
    public var metadataValue: JSONValue {
        guard let metadata, !metadata.isEmpty else { return .object([]) }
        return JSONValue(parsing: metadata) ?? .string(metadata)
    }

    package init(globalID: String, issueGlobalID: String, articleGlobalID: String? = nil, kind: String, placement: Int, caption: String, credit: String, fileName: String, crop350: String, path: String, metadata: String? = nil, sha256: String? = nil) {
        self.sha256 = sha256
        self.globalID = globalID
        self.issueGlobalID = issueGlobalID
        self.articleGlobalID = articleGlobalID
        self.kind = kind
        self.placement = placement
        self.caption = caption
        self.credit = credit
        self.fileName = fileName
        self.crop350 = crop350
        self.path = path
        self.metadata = metadata
    }
}

/// One article with everything about it.
public struct ArticleDetail: Sendable, Codable {
    public var article: StoredArticle
    public var body: String
    public var description: String
    public var url: String
    public var authorURL: String
    public var authorBio: String
    @JSONNullable public var sku: String?
    public var published: Bool
    public var customMeta: JSONValueBox
    public var assets: [StoredAsset]
    /// Articles of the same issue with a later / earlier date, nearest first.
    public var newer: [StoredArticle]
    public var older: [StoredArticle]

    package enum CodingKeys: String, CodingKey {
        case article, body, description, url, sku, published, assets, newer, older
        case authorURL = "author_url"
        case authorBio = "author_bio"
        case customMeta = "custom_meta"
    }

    /// The detail's members but `newer` and `older`, in key order, as `JSONDocument.encode`
    /// writes them (`writeDocument` puts the two lists in their place; a test holds its
    /// document equal to the encoded detail).
    package var documentValues: [(key: String, value: any Encodable)] {
        [(CodingKeys.article.rawValue, article), (CodingKeys.assets.rawValue, assets),
         (CodingKeys.authorBio.rawValue, authorBio), (CodingKeys.authorURL.rawValue, authorURL),
         (CodingKeys.body.rawValue, body), (CodingKeys.customMeta.rawValue, customMeta),
         (CodingKeys.description.rawValue, description), (CodingKeys.published.rawValue, published),
         (CodingKeys.sku.rawValue, _sku), (CodingKeys.url.rawValue, url)]
    }

    package init(article: StoredArticle, body: String, description: String, url: String, authorURL: String, authorBio: String, sku: String? = nil, published: Bool, customMeta: JSONValueBox, assets: [StoredAsset], newer: [StoredArticle], older: [StoredArticle]) {
        self.article = article
        self.body = body
        self.description = description
        self.url = url
        self.authorURL = authorURL
        self.authorBio = authorBio
        self.sku = sku
        self.published = published
        self.customMeta = customMeta
        self.assets = assets
        self.newer = newer
        self.older = older
    }
}

extension IssueReader {
    /// The document `JSONDocument.encode` makes of `article(id, issue:)` (`article show
    /// --json`, `/articles/{id}`), written through `write` as the store reads the article's
    /// neighbours, one at a time: the neighbours of an article of a 30,000-article issue are
    /// 12.6 MB of JSON, and read into lists first they were 20 MB of memory. `adjust` changes
    /// the detail before it is written (its neighbours are not in it). An unknown id throws
    /// before anything is written; should the store fail after that, the document ends with
    /// the error (as `JSONDocument.streamList`'s) and `JSONDocument.ListEndedByError` is thrown.
    public func writeArticleDocument(
        _ id: String, issue: String?, adjust: (inout ArticleDetail) -> Void = { _ in }, write: @escaping (String) -> Void
    ) throws {
        try ArticleDetail.writeDocument(adjust: adjust, write: write) { begin, neighbour in
            try eachArticleNeighbour(id, issue: issue, sides: ArticleNeighbour.both, begin: begin, neighbour)
        }
    }
}

extension ArticleDetail {
    /// `IssueStore.writeArticleDocument` of what `read` hands over as `eachArticleNeighbour` does.
    package static func writeDocument(
        adjust: (inout ArticleDetail) -> Void, write: @escaping (String) -> Void,
        read: (_ begin: (ArticleDetail) throws -> Void, _ neighbour: (ArticleNeighbour, StoredArticle) throws -> Void) throws -> Void
    ) throws {
        let writer = JSONDocument.ObjectWriter(write: write)
        let (newer, older) = (CodingKeys.newer.rawValue, CodingKeys.older.rawValue)
        var rest: [(key: String, value: any Encodable)] = []
        var side: ArticleNeighbour?
        func values(_ members: [(key: String, value: any Encodable)]) {
            for member in members { writer.value(member.key, member.value) }
        }
        func begin(_ found: ArticleDetail) {
            var detail = found
            adjust(&detail)
            let members = detail.documentValues
            values(members.filter { $0.key < newer })
            rest = members.filter { $0.key > older }
            writer.beginList(newer)
            side = .newer
        }
        func neighbour(_ which: ArticleNeighbour, _ article: StoredArticle) throws {
            if which == .older, side == .newer {
                writer.endList()
                writer.beginList(older)
                side = .older
            }
            try writer.item(article)
        }
        do {
            try withoutActuallyEscaping(begin) { begin in try read(begin, neighbour) }
        } catch {
            guard side != nil else { throw error }
            let failure = (error as? GalleyError) ?? GalleyError("the article's neighbours stopped: \(error)", id: .storeFailed)
            writer.interrupt(failure)
            values(rest)
            writer.finish()
            throw JSONDocument.ListEndedByError(error: failure)
        }
        if side == .newer {
            writer.endList()
            writer.beginList(older)
        }
        writer.endList()
        values(rest)
        writer.finish()
    }
}

/// Which of an article's neighbours (`IssueStore.eachArticleNeighbour`): of the same issue,
/// with a later date or an earlier one.
public enum ArticleNeighbour: Sendable, Hashable {
    case newer, older

    public static let both: Set<ArticleNeighbour> = [.newer, .older]
}

/// A JSON value that encodes as itself inside Codable output.
public struct JSONValueBox: Sendable, Codable {
    public var value: JSONValue

    public init(_ value: JSONValue) { self.value = value }

    public init(from decoder: Decoder) throws { value = .null }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .number(let n): if let i = Int(n) { try container.encode(i) } else { try container.encode(Double(n) ?? 0) }
        case .string(let s): try container.encode(s)
        case .array(let items): try container.encode(items.map(JSONValueBox.init))
        case .object(let members):
            var keyed = encoder.container(keyedBy: AnyKey.self)
            for (key, item) in members { try keyed.encode(JSONValueBox(item), forKey: AnyKey(key)) }
        }
    }

    package struct AnyKey: CodingKey {
        package var stringValue: String
        package var intValue: Int? { nil }
        package init(_ key: String) { stringValue = key }
        package init?(stringValue: String) { self.stringValue = stringValue }
        package init?(intValue: Int) { nil }
    }
}

public struct AssetFilter: Sendable {
    public var issue: String?
    public var article: String?
    public var kind: MediaKind?
    /// Only the issue's own assets, not its articles'.
    public var issueOwn = false
    /// Only the first image (of what the other filters leave). With `issueOwn`: the cover.
    public var first = false

    public init(issue: String? = nil, article: String? = nil, kind: MediaKind? = nil, issueOwn: Bool = false, first: Bool = false) {
        (self.issue, self.article, self.kind, self.issueOwn, self.first) = (issue, article, kind, issueOwn, first)
    }
}

/// How many assets a filter leaves: `galley assets --count --json` and `/assets?count=true`
/// (`count_document` in docs/json/common.schema.json).
public struct AssetCount: Encodable, Sendable {
    public var count: Int
    public init(count: Int) { self.count = count }
}

/// One file of an imported issue, as recorded at import.
public struct StoredFile: Sendable, Hashable {
    /// Its name in the zip (below the issue folder).
    public var name: String
    /// Where it is in the store.
    public var path: String
    public var size: Int64
    /// Lowercase hex.
    public var sha256: String
    /// The issue's last_updated (RFC 3339), for `Last-Modified`.
    public var lastUpdated: String

    public init(name: String, path: String, size: Int64, sha256: String, lastUpdated: String) {
        (self.name, self.path, self.size, self.sha256, self.lastUpdated) = (name, path, size, sha256, lastUpdated)
    }
}

/// An issue's package: the zip it was imported from, kept in the store for `serve`'s feed.
public struct StoredPackage: Sendable, Hashable {
    public var appleID: String
    public var globalID: String
    /// One more with every import that changed the issue (never reused, even after a delete).
    public var version: Int64
    /// Lowercase hex; also the kept file's name.
    public var sha256: String
    public var size: Int64
    /// The issue's last_updated (RFC 3339).
    public var lastUpdated: String
    /// Where the zip is in the store.
    public var path: String
    /// Why the feed leaves it out (an older Linechef format that crashes current Dumpling
    /// builds), or nil when it is served.
    public var withheld: String?

    /// The zip as a stored file (named by its content), for downloads.
    public var file: StoredFile {
        StoredFile(name: "\(sha256).zip", path: path, size: size, sha256: sha256, lastUpdated: lastUpdated)
    }

    package init(appleID: String, globalID: String, version: Int64, sha256: String, size: Int64, lastUpdated: String, path: String, withheld: String? = nil) {
        self.appleID = appleID
        self.globalID = globalID
        self.version = version
        self.sha256 = sha256
        self.size = size
        self.lastUpdated = lastUpdated
        self.path = path
        self.withheld = withheld
    }
}

/// What merging independent articles did.
public struct ArticleMerge: Sendable, Hashable, Encodable {
    /// Global ids added, and updated (their content changed).
    public var added: [String] = []
    public var updated: [String] = []
    /// How many were already in the store as given.
    public var unchanged = 0

    public init() {}

    /// What merging `articles` into a store that holds `stored` (by global id) does, and the
    /// articles to write: new ones and changed ones, in the order given. The rule every
    /// backend applies.
    package static func plan(_ articles: [IndependentArticle], stored: [String: IndependentArticle]) -> (ArticleMerge, [IndependentArticle]) {
        var merge = ArticleMerge()
        var changed: [IndependentArticle] = []
        for article in articles {
            if let existing = stored[article.globalID] {
                if existing == article {
                    merge.unchanged += 1
                } else {
                    merge.updated.append(article.globalID)
                    changed.append(article)
                }
            } else {
                merge.added.append(article.globalID)
                changed.append(article)
            }
        }
        return (merge, changed)
    }
}

/// A package `galley sync` downloaded and the import gate refused.
public struct RefusedPackage: Sendable, Hashable {
    public var sha256: String
    public var appleID: String
    /// Why, as the gate said it.
    public var message: String
    /// When, RFC 3339.
    public var refusedAt: String

    public init(sha256: String, appleID: String, message: String, refusedAt: String) {
        self.sha256 = sha256
        self.appleID = appleID
        self.message = message
        self.refusedAt = refusedAt
    }
}

/// A feed `galley sync` follows, as its last complete sync left it.
public struct FollowedFeed: Sendable, Hashable {
    /// The feed's address, as given to `sync`.
    public var url: String
    /// The feed answer's ETag, sent as `If-None-Match` next time (nil when it gave none).
    public var etag: String?
    /// The feed's revision (a Drupal-style endpoint's version): a lower one later is a rollback.
    public var revision: Int64
    /// When, RFC 3339.
    public var syncedAt: String
    /// When the feed's verified signature expires (RFC 3339), for signed feeds.
    public var expires: String?
    /// The key the feed's signature was verified with (`sync --trust-key`), nil when it was
    /// followed without one: a sync that trusts another key (or one, where none was) reads the
    /// feed again instead of taking a 304 for the old trust.
    public var keyID: String?

    public init(url: String, etag: String?, revision: Int64, syncedAt: String, expires: String? = nil, keyID: String? = nil) {
        self.url = url
        self.etag = etag
        self.revision = revision
        self.syncedAt = syncedAt
        self.expires = expires
        self.keyID = keyID
    }
}
