import Foundation
import GalleyCore
import GalleyFormats
import GalleySigning
import GalleyStore

/// What `galley publish` writes and how (docs/publish.md).
public struct PublishOptions: Sendable {
    /// The folder the site is written into (made if missing).
    public var folder: URL
    /// The address the site is reached at (`https://cdn.example.com/issues`), for absolute
    /// links; nil: links relative to the site's root.
    public var publicURL: String?
    /// Signs `feed.json` into `feed.json.sig` (the `Galley-Signature` value).
    public var signingKey: FeedSigningKey?
    /// How long that signature holds: publish again before it runs out.
    public var signatureLifetime: TimeInterval = 7 * 86_400

    public init(folder: URL) { self.folder = folder }
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
/// and never rewritten; a JSON file is written only when its bytes change, each through a
/// temporary file renamed into place; `feed.json` is written after everything it names, and the
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
        let root = options.folder
        try makeFolder(root)
        let old = readManifest()
        var site = SiteWriter(root: root, old: old.files)
        let base = options.publicURL.map { $0 + "/" } ?? ""

        let revision = try store.revision()
        let packages = try store.packages().filter { $0.withheld == nil }
        var issues = 0
        for package in packages {
            progress(package.appleID)
            let issuePath = HTMLText.urlPath(package.appleID)
            let zip = try store.localFile(package.file)
            try site.place(file: zip.path, at: "packages/\(issuePath)/\(package.sha256).zip", sha256: package.sha256)
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
                try site.place(file: file.path, at: Self.filePath(asset, sha: sha), sha256: sha)
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
            try site.write(Data((header + "\n").utf8), at: "feed.json" + Self.signatureSuffix)
            expires = until.ISO8601Format()
        }
        try site.write(feedBytes, at: "feed.json")

        // Then what nothing names any more, and the record of this publish.
        let removed = site.removeUnnamed()
        try writeManifest(Manifest(files: site.files))
        return PublishReport(to: root.path, revision: revision, issues: issues, written: site.written, unchanged: site.unchanged,
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

    func readManifest() -> Manifest {
        let url = options.folder.appending(path: Self.manifestName)
        guard let data = try? Data(contentsOf: url), let manifest = try? JSONDecoder().decode(Manifest.self, from: data) else {
            return Manifest(files: [:])
        }
        return manifest
    }

    func writeManifest(_ manifest: Manifest) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = (try? encoder.encode(manifest)) ?? Data()
        try SiteWriter.atomicWrite(data, to: options.folder.appending(path: Self.manifestName))
    }

    func makeFolder(_ url: URL) throws {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw GalleyError("cannot make the folder to publish into: \(error.localizedDescription)", id: .outputUnwritable,
                              path: url.path, hint: "Check the path and its permissions.")
        }
    }
}

/// Places a publish's files under `root`, counting what it wrote, and remembers every path it
/// placed (the new manifest).
struct SiteWriter {
    let root: URL
    /// The last publish's files (path: SHA-256).
    let old: [String: String]
    private(set) var files: [String: String] = [:]
    private(set) var written = 0
    private(set) var unchanged = 0
    private(set) var bytesWritten: Int64 = 0

    init(root: URL, old: [String: String]) {
        self.root = root
        self.old = old
    }

    /// A JSON document at `path` (relative), written only when its bytes changed.
    mutating func json(_ path: String, _ value: some Encodable) throws {
        try write(Data(JSONDocument.encode(AnyEncodable(value)).utf8), at: path)
    }

    /// Bytes at `path`, written only when they differ from what the last publish left there.
    mutating func write(_ data: Data, at path: String) throws {
        let hasher = SHA256Hasher()
        data.withUnsafeBytes { hasher.update($0) }
        let sha = hasher.finalizeHex()
        let target = try url(path)
        if old[path] == sha, FileStatus(target.path)?.size == Int64(data.count) {
            files[path] = sha
            unchanged += 1
            return
        }
        try makeParent(target)
        try Self.atomicWrite(data, to: target)
        files[path] = sha
        written += 1
        bytesWritten += Int64(data.count)
    }

    /// A copy of the stored file `source` at `path`, a content address: once there, it is
    /// never written again.
    mutating func place(file source: String, at path: String, sha256: String) throws {
        let target = try url(path)
        if FileStatus(target.path)?.kind == .file, old[path] == sha256 || old[path] == nil {
            files[path] = sha256
            unchanged += 1
            return
        }
        try makeParent(target)
        let temporary = target.deletingLastPathComponent().appending(path: ".\(target.lastPathComponent).\(getpid()).partial")
        do {
            try? FileManager.default.removeItem(at: temporary)
            try FileManager.default.copyItem(at: URL(fileURLWithPath: source), to: temporary)
            guard rename(temporary.path, target.path) == 0 else { throw GalleyError(String(cString: strerror(errno))) }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw GalleyError("cannot write \(path): \(error)", id: .outputUnwritable, path: target.path,
                              hint: "Check the folder's free space and permissions; the site is left as the last publish made it.")
        }
        files[path] = sha256
        written += 1
        bytesWritten += FileStatus(target.path)?.size ?? 0
    }

    /// Removes the last publish's files this one did not place, and the folders they leave
    /// empty; returns how many files went.
    func removeUnnamed() -> Int {
        var removed = 0
        for path in old.keys.sorted() where files[path] == nil {
            guard let target = try? url(path) else { continue }
            if unlink(target.path) == 0 { removed += 1 }
            var folder = target.deletingLastPathComponent()
            while folder.path.count > root.path.count, rmdir(folder.path) == 0 {
                folder = folder.deletingLastPathComponent()
            }
        }
        return removed
    }

    /// `path` under the root; a path that would leave it (no store names one, but the
    /// manifest is a file anyone could edit) is refused.
    func url(_ path: String) throws -> URL {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.isEmpty, !path.hasPrefix("/"), !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw GalleyError("`\(path)` is not a path inside the site", id: .outputUnwritable, path: root.path,
                              hint: "Remove \(Publisher.manifestName) if it was edited by hand; the next publish writes every file.")
        }
        return root.appending(path: path)
    }

    func makeParent(_ target: URL) throws {
        do {
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw GalleyError("cannot make \(target.deletingLastPathComponent().path): \(error.localizedDescription)", id: .outputUnwritable,
                              path: target.path, hint: "Check the folder's permissions.")
        }
    }

    /// Writes through a temporary file beside `target`, renamed over it: a reader sees the
    /// old file or the new one, never half of one.
    static func atomicWrite(_ data: Data, to target: URL) throws {
        do {
            try data.write(to: target, options: .atomic)
        } catch {
            throw GalleyError("cannot write \(target.lastPathComponent): \(error.localizedDescription)", id: .outputUnwritable,
                              path: target.path, hint: "Check the folder's free space and permissions.")
        }
    }
}
