import Foundation
import GalleyCore

/// What an editor wrote: the issue source folder, read and checked (docs/source-format.md).
public struct IssueSource: Sendable {
    /// The issue folder (standardized), as `tree` resolves paths in it.
    public var root: URL { tree.root }
    /// `issue.yaml`, `issue.yml` or `issue.json`.
    public var issueFile: String
    public var appleID: String
    public var globalID: String?
    public var title: String
    public var description: String
    public var displayDate: String?
    public var publishDate: ISODateTime
    public var lastUpdated: ISODateTime?
    public var metadata: JSONValue?
    /// The issue's own images, cover first.
    public var images: [AssetSource]
    /// The article folders in issue order; `IssueSourceLoader.loadArticle` reads each.
    public var articleFolders: [ArticleFolder]
    /// Resolves the paths the articles name, inside `root`.
    package var tree: SourceTree
}

/// An article folder and its slug, before its fields are read.
public struct ArticleFolder: Sendable, Hashable {
    public var folder: String
    public var slug: String
}

public enum BodyFormat: String, Sendable {
    case markdown, html
}

/// One article folder (`articles/<folder>/`).
public struct ArticleSource: Sendable {
    /// The folder name, e.g. `01-band-in-the-basement`.
    public var folder: String
    /// The folder name without its ordering prefix, e.g. `band-in-the-basement`. Ids derive from it.
    public var slug: String
    /// Where the article's fields were written (front matter or `article.yaml`).
    public var fieldsFile: String
    /// The body file, relative to the issue folder.
    public var bodyFile: String
    public var bodyFormat: BodyFormat
    /// Lines before the body text in `bodyFile` (the front matter), for locating placeholders.
    public var bodyLineOffset: Int

    public var id: String?
    public var title: String
    public var dek: String = ""
    public var description: String = ""
    public var section: String = ""
    public var type: String = "article"
    public var authorName: String = ""
    public var authorURL: String = ""
    public var authorBio: String = ""
    public var keywords: [String] = []
    public var commentary: String = ""
    public var url: String = ""
    public var source: String = ""
    public var sku: String?
    public var featured: Bool = false
    public var published: Bool = true
    public var date: ISODateTime?
    public var dateLocation: SourceLocation?
    public var metadata: JSONValue?
    public var assets: [AssetSource] = []
    /// The keys of listed assets whose files could not be found: placeholders naming them are
    /// not reported as unknown (the missing file is).
    public var unresolvedAssetKeys: [String] = []
}

/// One asset as listed in a source file.
public struct AssetSource: Sendable {
    /// The key placeholders use: the explicit id, else the file name.
    public var key: String
    public var explicitID: String?
    public var file: SourceFile
    public var thumbnail: SourceFile?
    /// A still picture of a video or sound (its poster frame): its square crop is the
    /// thumbnail when no `thumbnail` is given.
    public var poster: SourceFile?
    public var caption: String = ""
    public var credit: String = ""
    public var alt: String = ""
    public var metadata: JSONValue?
    /// Where the asset is listed.
    public var location: SourceLocation

    public init(key: String, file: SourceFile, location: SourceLocation) {
        self.key = key
        self.file = file
        self.location = location
    }
}
