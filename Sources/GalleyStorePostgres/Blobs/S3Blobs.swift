import Foundation
import GalleyCore
import GalleyFormats
import GalleyS3
import GalleyStore

/// Blobs in an S3 bucket (`S3Location`), under `PREFIX/ab/abcdef…`. An import uploads each blob
/// once (a HEAD first: a blob already there is not sent again), a single PUT whose
/// `x-amz-content-sha256` is the blob's own SHA-256 (the service refuses bytes that do not match
/// it), or a multipart upload for large files, each part hashed the same way; memory stays one
/// part. Readers get a local copy, fetched once into this machine's cache and checked against
/// the SHA-256 (blobs never change, so a cached copy is never stale); the cache keeps the most
/// recently used blobs within `cacheLimit` bytes (`GALLEY_BLOB_CACHE_MB`, 1 GiB by default).
final class S3Blobs: BlobStore, @unchecked Sendable {
    let location: S3Location
    let root: URL
    let cacheLimit: Int64
    private let client: S3Client

    init(_ location: S3Location, root: URL, partSize: Int = 16 << 20, cacheLimit: Int64 = 1 << 30) {
        self.location = location
        self.root = root
        self.cacheLimit = cacheLimit
        client = S3Client(location, partSize: partSize)
    }

    var partSize: Int { client.partSize }
    var staging: URL { root.appending(path: "staging") }
    var cache: URL { root.appending(path: "cache") }
    var display: String { location.display }
    var isLocal: Bool { false }

    /// `PREFIX/ab/abcdef…`: fanned out as the folder store's blobs are.
    func key(_ sha256: String) -> String { location.key("\(sha256.prefix(2))/\(sha256)") }
    func address(_ sha256: String) -> String { "s3://\(location.bucket)/\(key(sha256))" }
    func name(_ sha256: String) -> String { address(sha256) }

    func createFolders() throws {
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
    }

    /// The blob's size, or nil when it is not there.
    func size(_ sha256: String) throws -> Int64? { try client.size(key(sha256)) }

    func place(_ staged: URL, sha256: String, size: Int64) throws -> Bool {
        defer { try? FileManager.default.removeItem(at: staged) }
        if try self.size(sha256) == size { return false }
        try client.put(file: staged.path, sha256: sha256, key: key(sha256), headers: .init(contentType: Self.mediaType(staged.path)))
        return true
    }

    /// A blob's media type from its bytes (a blob has no name of its own: two files of any
    /// names may share it), so a bucket console or a CDN pointed at the blobs shows it as what it
    /// is: the media formats Galley probes, a zip by its signature, else
    /// `application/octet-stream`.
    static func mediaType(_ path: String) -> String {
        if let probed = try? MediaProber.probe(path: path) { return probed.format.mimeType }
        if let handle = FileHandle(forReadingAtPath: path) {
            defer { try? handle.close() }
            if (try? handle.read(upToCount: 4)) == Data([0x50, 0x4B, 0x03, 0x04]) { return "application/zip" }
        }
        return "application/octet-stream"
    }

    func remove(_ sha256: String) {
        try? client.delete(key(sha256))
        try? FileManager.default.removeItem(at: Self.fanOut(cache, sha256))
    }

    func all() throws -> [String] {
        try client.list().compactMap { object in
            guard let name = object.path.split(separator: "/").last, Self.isBlobName(name),
                  location.key(object.path) == key(String(name)) else { return nil }
            return String(name)
        }.sorted()
    }

    func verify(_ sha256: String, size: Int64) -> String? {
        // The content was checked by the service against its SHA-256 on upload; a listing or a
        // HEAD cannot re-read it, so the size is what is checked here.
        do {
            guard let stored = try self.size(sha256) else { return "missing" }
            return stored == size ? nil : "\(stored) bytes, recorded \(size)"
        } catch {
            return "\(error)"
        }
    }

    func localFile(_ sha256: String, size: Int64) throws -> URL {
        let cached = Self.fanOut(cache, sha256)
        if FileStatus(cached.path)?.size == size {
            utimes(cached.path, nil)  // recently used: the last the cache lets go
            return cached
        }
        try FileManager.default.createDirectory(at: cached.deletingLastPathComponent(), withIntermediateDirectories: true)
        let partial = cached.deletingLastPathComponent().appending(path: ".\(sha256).\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: partial) }
        let status = try client.download(key(sha256), to: partial.path)
        guard status == .ok else {
            throw GalleyError("cannot fetch \(name(sha256)): HTTP \(status.code)", id: .storeFailed,
                              hint: "`galley store check` tells whether the blob store lost it.")
        }
        guard (try? FileDigest.of(partial.path).sha256) == sha256 else {
            throw GalleyError("\(name(sha256)) came back with other content than its SHA-256", id: .storeFailed,
                              hint: "`galley store check` tells whether the blob store lost it.")
        }
        guard rename(partial.path, cached.path) == 0 else {
            throw GalleyError("cannot keep a copy of \(name(sha256)) in \(cache.path)", id: .storeFailed,
                              hint: "Check the free space and permissions of \(root.path).")
        }
        trimCache(keeping: cached)
        return cached
    }

    /// Removes the least recently used cached blobs until the cache is within `cacheLimit`
    /// (never `keeping`, the one just fetched). A reader that has one open keeps reading it.
    private func trimCache(keeping: URL) {
        let manager = FileManager.default
        var entries: [(url: URL, size: Int64, used: Date)] = []
        for folder in (try? manager.contentsOfDirectory(atPath: cache.path)) ?? [] where folder.utf8.count == 2 {
            let base = cache.appending(path: folder)
            for name in (try? manager.contentsOfDirectory(atPath: base.path)) ?? [] where Self.isBlobName(name) {
                let url = base.appending(path: name)
                let attributes = try? manager.attributesOfItem(atPath: url.path)
                entries.append((url, (attributes?[.size] as? NSNumber)?.int64Value ?? 0, attributes?[.modificationDate] as? Date ?? .distantPast))
            }
        }
        var total = entries.reduce(0) { $0 + $1.size }
        for entry in entries.sorted(by: { $0.used < $1.used }) where total > cacheLimit && entry.url != keeping {
            try? manager.removeItem(at: entry.url)
            total -= entry.size
        }
    }

    /// Makes the bucket (for tests and first set-up); an existing one of ours is fine.
    func createBucket() throws { try client.createBucket() }
}
