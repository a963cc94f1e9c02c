/// An article with no issue (Dumpling's independent articles, seed 002's
/// `createIndependentArticle`): what `galley import --articles`, `galley sync` of an article
/// feed and key maps for foreign feeds put in the store, merged by `globalID`.
public struct IndependentArticle: Sendable, Hashable, Encodable {
    public var globalID: String
    public var title: String
    public var dek = ""
    public var section = ""
    public var type = "article"
    public var author = ""
    /// RFC 3339 in UTC (`2026-01-15T09:30:00Z`), or nil when the feed gives none.
    @JSONNullable public var date: String?
    public var keywords: [String] = []
    /// HTML.
    public var body = ""
    /// Where the article lives on the web, if anywhere.
    public var url = ""
    public var featured = false

    public init(globalID: String, title: String) {
        self.globalID = globalID
        self.title = title
    }

    enum CodingKeys: String, CodingKey {
        case title, dek, section, type, author, date, keywords, body, url, featured
        case globalID = "global_id"
    }
}
