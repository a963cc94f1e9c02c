import Foundation
import GalleyCore
import GalleyFormats
import GalleyS3
import GalleyServe
import GalleySigning
import GalleyStore

/// Where `galley publish` puts the site.
public enum PublishDestination: Sendable, Equatable {
    /// A folder (made if missing) a web server or a static host serves.
    case folder(URL)
    /// `s3://BUCKET[/PREFIX]` on S3-compatible object storage, with the endpoint and
    /// credentials from the AWS variables of `environment` (docs/publish.md).
    case bucket(String, environment: [String: String])

    /// `text` as `--to` takes it: an `s3://` address (checked here, with its credentials, so
    /// a wrong one is a usage error before any work), else a folder.
    public static func parse(_ text: String, environment: [String: String]) throws -> PublishDestination {
        guard S3Location.isAddress(text) else { return .folder(URL(fileURLWithPath: text)) }
        _ = try S3Location(text, environment: environment)
        return .bucket(text, environment: environment)
    }
}

/// What `galley publish` writes and how (docs/publish.md).
public struct PublishOptions: Sendable {
    public var destination: PublishDestination
    /// The address the site is reached at (`https://cdn.example.com/issues`), for absolute
    /// links; nil: links relative to the site's root.
    public var publicURL: String?
    /// Signs `feed.json` into `feed.json.sig` (the `Galley-Signature` value).
    public var signingKey: FeedSigningKey?
    /// How long that signature holds: publish again before it runs out.
    public var signatureLifetime: TimeInterval = 7 * 86_400
    /// The `Cache-Control` a bucket's objects carry (a folder's web server sets its own): the
    /// content-addressed ones are cached for good, the JSON ones as serve's
    /// (`--shared-max-age`, `--stale-while-revalidate`).
    public var sharedMaxAge = 10
    public var staleWhileRevalidate = 60

    public init(destination: PublishDestination) { self.destination = destination }
}

/// What one publish did (`publish --json`).
public struct PublishReport: Sendable, Encodable {
    public var to: String
    public var revision: Int64
    public var issues: Int
    /// Files written because they were new or changed.
    public var written: Int
    /// Files already there with the same content.
    public var unchanged: Int
    /// Files of an earlier publish no issue references any more, removed after the new feed.
    public var removed: Int
    public var bytesWritten: Int64
    @JSONNullable public var signatureExpires: String?

    enum CodingKeys: String, CodingKey {
        case to, revision, issues, written, unchanged, removed
        case bytesWritten = "bytes_written"
        case signatureExpires = "signature_expires"
    }
}

/// `galley publish`: the store as plain files a static host or a bucket serves, at the same
/// relative paths as `galley serve`'s API (`feed.json` for `/feed`, `issues.json` for
/// `/issues`, `issues/{apple_id}.json`, `articles/{global_id}.json`, `packages/{apple_id}.json`,
/// `packages/{apple_id}/{sha256}.zip`, `issues/{global_id}/files/{sha256}/{name}`).
///
/// Incremental and safe for readers: content-addressed files (zips, media) are written once
/// and never rewritten; a JSON file is written only when its bytes change, whole (a folder's
/// through a temporary file renamed into place, a bucket's in one PUT); `feed.json` is written after everything it names, and the
/// files an earlier publish wrote that nothing names any more are removed only after it, so a
/// reader never meets a feed that names a missing file. What was written is recorded in
/// `.galley-publish.json`, which the next publish compares against.
public struct Publisher: Sendable {
    let store: any IssueReader
    let options: PublishOptions

    public init(store: any IssueReader, options: PublishOptions) {
        self.store = store
        var options = options
        options.publicURL = options.publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.options = options
    }

    static let manifestName = ".galley-publish.json"

    /// The record of one publish: every file it placed, by relative path, with its SHA-256.
    struct Manifest: Codable {
        var files: [String: String]
    }

    /// The feed's signature beside it.
    static let signatureSuffix = ".sig"

    public func publish(progress: (String) -> Void = { _ in }) throws -> PublishReport {
        let target: any SiteTarget = switch options.destination {
        case .folder(let url): FolderSite(root: url)
        case .bucket(let address, let environment): try BucketSite(address, environment: environment)
        }
        try target.prepare()
        var site = SiteWriter(target: target, old: Self.readManifest(target).files,
                              jsonCacheControl: GalleyServer.jsonCacheControl(sharedMaxAge: options.sharedMaxAge,
                                                                              staleWhileRevalidate: options.staleWhileRevalidate))
        let base = options.publicURL.map { $0 + "/" } ?? ""

        let revision = try store.revision()
        let packages = try store.packages().filter { $0.withheld == nil }
        var issues = 0
        for package in packages {
            progress(package.appleID)
            let issuePath = HTMLText.urlPath(package.appleID)
            let zip = try store.localFile(package.file)
            try site.place(file: zip.path, at: "packages/\(issuePath)/\(package.sha256).zip", sha256: package.sha256, type: "application/zip")
            try site.json("packages/\(issuePath).json", GalleyServer.PackageAnswer(package, base: options.publicURL ?? "", relative: base.isEmpty))
            // The issue with its articles (as /v2/issues/{id}), each article's detail (without
            // neighbours, which would make the files grow with the square of the issue), and
            // every asset's file at its content address.
            var summary: StoredIssue?
            var articles: [StoredArticle] = []
            try store.eachIssueArticle(package.appleID, withBodies: false, begin: { summary = $0 }, { articles.append($0) })
            guard let summary else { continue }
            try site.json("issues/\(issuePath).json", IssueDocument(issue: summary, articles: articles))
            for article in articles {
                var detail = try store.article(article.globalID, issue: summary.globalID, neighbours: [])
                detail.assets = detail.assets.map { published($0, base: base) }
                try site.json("articles/\(HTMLText.urlPath(article.globalID)).json", detail)
            }
            var assets: [StoredAsset] = []
            try store.eachAsset(AssetFilter(issue: summary.globalID)) { assets.append($0) }
            var placed = Set<String>()
            for asset in assets {
                guard let sha = asset.sha256, placed.insert(asset.fileName).inserted else { continue }
                let file = try store.localFile(try store.file(asset.fileName, issue: summary.globalID))
                try site.place(file: file.path, at: Self.filePath(asset, sha: sha), sha256: sha,
                               type: GalleyServer.mediaType(of: file.path, name: asset.fileName))
            }
            try site.json("issues/\(issuePath)/assets.json", GalleyServer.ListAnswer(items: assets.map { published($0, base: base) }))
            issues += 1
        }
        try site.json("issues.json", GalleyServer.ListAnswer(items: try store.issues().filter { issue in
            packages.contains { $0.appleID == issue.appleID }
        }))

        // Last: the feed (and its signature just before it), which names everything above.
        let feed = GalleyServer.FeedAnswer(revision: revision, packages: packages.map {
            GalleyServer.PackageAnswer($0, base: options.publicURL ?? "", relative: base.isEmpty)
        })
        let feedBytes = Data(JSONDocument.encode(AnyEncodable(feed)).utf8)
        var expires: String?
        if let key = options.signingKey {
            let until = Date().addingTimeInterval(options.signatureLifetime)
            let header = key.header(for: feedBytes, expires: until)
            try site.write(Data((header + "\n").utf8), at: "feed.json" + Self.signatureSuffix, type: "text/plain; charset=utf-8")
            expires = until.ISO8601Format()
        }
        try site.write(feedBytes, at: "feed.json", type: GalleyServer.json)

        // Then what nothing names any more, and the record of this publish.
        let removed = site.removeUnnamed()
        try Self.writeManifest(Manifest(files: site.files), to: target)
        return PublishReport(to: target.display, revision: revision, issues: issues, written: site.written, unchanged: site.unchanged,
                             removed: removed, bytesWritten: site.bytesWritten, signatureExpires: expires)
    }

    /// An asset's file at its content address, relative to the site's root.
    static func filePath(_ asset: StoredAsset, sha: String) -> String {
        "issues/\(HTMLText.urlPath(asset.issueGlobalID))/files/\(sha)/\(HTMLText.urlPath(asset.fileName))"
    }

    /// The asset as the published JSON shows it: `path` is its file's content address.
    func published(_ asset: StoredAsset, base: String) -> StoredAsset {
        var shown = asset
        shown.path = asset.sha256.map { base + Self.filePath(asset, sha: $0) } ?? ""
        return shown
    }

    struct IssueDocument: Encodable {
        var issue: StoredIssue
        var articles: [StoredArticle]
    }

    static func readManifest(_ target: any SiteTarget) -> Manifest {
        guard let data = try? target.read(manifestName), let manifest = try? JSONDecoder().decode(Manifest.self, from: data) else {
            return Manifest(files: [:])
        }
        return manifest
    }

    static func writeManifest(_ manifest: Manifest, to target: any SiteTarget) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try target.write((try? encoder.encode(manifest)) ?? Data(), at: manifestName, headers: .init(type: GalleyServer.json, cacheControl: "no-store"))
    }
}
