import Foundation
import GalleyCore
import GalleyServe

/// What a published object is sent with: its media type, and how long caches keep it. A
/// bucket stores both with the object; a folder's web server sets its own (docs/publish.md).
struct SiteHeaders: Sendable {
    var type: String
    var cacheControl: String
}

/// Where a publish's files go: a folder (`FolderSite`) or a bucket (`BucketSite`). Paths are
/// relative to the site's root and already checked by `SiteWriter.checked`. Every write
/// replaces the whole file at once: a reader sees the old bytes or the new ones.
protocol SiteTarget {
    /// The site's address as the report names it (a path, `s3://bucket/prefix`).
    var display: String { get }
    /// Makes the folder, or lists what the bucket holds.
    func prepare() throws
    /// The size of what is at `path` now; nil when nothing is.
    func size(_ path: String) throws -> Int64?
    /// The bytes at `path` (the manifest), or nil when there is none.
    func read(_ path: String) throws -> Data?
    func write(_ data: Data, at path: String, headers: SiteHeaders) throws
    /// A copy of the local file `source`, whose SHA-256 is `sha256`, at `path`.
    func copy(_ source: String, sha256: String, at path: String, headers: SiteHeaders) throws
    /// Removes `path` (and a folder it leaves empty); false when it could not.
    func remove(_ path: String) -> Bool
}

/// Places a publish's files on its target, counting what it wrote, and remembers every path
/// it placed (the new manifest).
struct SiteWriter {
    let target: any SiteTarget
    /// The last publish's files (path: SHA-256).
    let old: [String: String]
    let jsonCacheControl: String
    private(set) var files: [String: String] = [:]
    private(set) var written = 0
    private(set) var unchanged = 0
    private(set) var bytesWritten: Int64 = 0

    /// A file named by its content never changes: caches may keep it for good.
    static let immutable = "public, max-age=31536000, immutable"

    init(target: any SiteTarget, old: [String: String], jsonCacheControl: String) {
        self.target = target
        self.old = old
        self.jsonCacheControl = jsonCacheControl
    }

    /// A JSON document at `path`, written only when its bytes changed.
    mutating func json(_ path: String, _ value: some Encodable) throws {
        try write(Data(JSONDocument.encode(AnyEncodable(value)).utf8), at: path, type: GalleyServer.json)
    }

    /// Bytes at `path` (a name whose content changes: short cache lifetime), written only when
    /// they differ from what the last publish left there.
    mutating func write(_ data: Data, at path: String, type: String) throws {
        let hasher = SHA256Hasher()
        data.withUnsafeBytes { hasher.update($0) }
        let sha = hasher.finalizeHex()
        let path = try Self.checked(path)
        if old[path] == sha, try target.size(path) == Int64(data.count) {
            files[path] = sha
            unchanged += 1
            return
        }
        try target.write(data, at: path, headers: SiteHeaders(type: type, cacheControl: jsonCacheControl))
        files[path] = sha
        written += 1
        bytesWritten += Int64(data.count)
    }

    /// A copy of the stored file `source` at `path`, a content address: once there, it is
    /// never written again.
    mutating func place(file source: String, at path: String, sha256: String, type: String) throws {
        let path = try Self.checked(path)
        let size = FileStatus(source)?.size ?? 0
        if old[path] == sha256 || old[path] == nil, try target.size(path) == size {
            files[path] = sha256
            unchanged += 1
            return
        }
        try target.copy(source, sha256: sha256, at: path, headers: SiteHeaders(type: type, cacheControl: Self.immutable))
        files[path] = sha256
        written += 1
        bytesWritten += size
    }

    /// Removes the last publish's files this one did not place; returns how many went.
    func removeUnnamed() -> Int {
        var removed = 0
        for path in old.keys.sorted() where files[path] == nil {
            guard let path = try? Self.checked(path) else { continue }
            if target.remove(path) { removed += 1 }
        }
        return removed
    }

    /// `path` when it stays inside the site; one that would leave it (no store names one, but
    /// the manifest is a file anyone could edit) is refused.
    static func checked(_ path: String) throws -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.isEmpty, !path.hasPrefix("/"), !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw GalleyError("`\(path)` is not a path inside the site", id: .outputUnwritable, path: path,
                              hint: "Remove \(Publisher.manifestName) if it was edited by hand; the next publish writes every file.")
        }
        return path
    }
}
