/// The values of one `latest.json`, in Dumpling's vocabulary (wire format §2).
/// Galley builds these when packing and reads them back when validating and importing.

/// One asset: an element of an `images.ordered`, `sound_files.ordered` or `videos.ordered` list.
public struct AssetRecord: Sendable, Hashable {
    public var id: String
    public var kind: MediaKind
    public var caption: String
    /// The credit line (Dumpling calls it `source`).
    public var source: String
    /// Path of the main file, relative to the issue folder.
    public var fileName: String
    /// Path of the square thumbnail, relative to the issue folder; never empty.
    public var crop350: String
    /// Free-form metadata: Galley puts `alt`, `width` and `height` here.
    public var metadata: JSONValue?

    public init(
        id: String, kind: MediaKind, caption: String = "", source: String = "", fileName: String,
        crop350: String, metadata: JSONValue? = nil
    ) {
        self.id = id
        self.kind = kind
        self.caption = caption
        self.source = source
        self.fileName = fileName
        self.crop350 = crop350
        self.metadata = metadata
    }
}

/// One element of `articles`.
public struct ArticleRecord: Sendable, Hashable {
    public var globalID: String
    public var title: String
    public var body: String
    public var description: String = ""
    public var url: String = ""
    public var section: String = ""
    public var authorName: String = ""
    public var source: String = ""
    public var dek: String = ""
    public var authorURL: String = ""
    public var authorBio: String = ""
    /// Comma-separated, no spaces (Dumpling matches it as a substring).
    public var keywords: String = ""
    public var commentary: String = ""
    public var type: String = "article"
    /// `yyyy-MM-dd'T'HH:mm:ss.SSS+0000`, Dumpling's sort key.
    public var dateLastUpdated: String
    public var sku: String?
    public var published: Bool = true
    public var featured: Bool = false
    /// The free-form metadata, written as both `customMeta` and the legacy `metadata`.
    public var customMeta: JSONValue = .object([])
    public var images: [AssetRecord] = []
    public var sounds: [AssetRecord] = []
    public var videos: [AssetRecord] = []

    public init(globalID: String, title: String, body: String, dateLastUpdated: String) {
        self.globalID = globalID
        self.title = title
        self.body = body
        self.dateLastUpdated = dateLastUpdated
    }

    public var assets: [AssetRecord] { images + sounds + videos }
}

/// The top level of `latest.json`, less the articles (which are written one at a time).
public struct IssueRecord: Sendable, Hashable {
    public var globalID: String
    public var appleID: String
    public var title: String
    public var description: String = ""
    public var lastUpdated: String
    public var displayDate: String
    /// `MM/dd/yyyy`.
    public var publishDate: String
    public var metadata: JSONValue = .object([])
    /// The issue's own images, cover first.
    public var images: [AssetRecord] = []

    public init(
        globalID: String, appleID: String, title: String, lastUpdated: String, displayDate: String,
        publishDate: String
    ) {
        self.globalID = globalID
        self.appleID = appleID
        self.title = title
        self.lastUpdated = lastUpdated
        self.displayDate = displayDate
        self.publishDate = publishDate
    }
}
