import Foundation
import GalleyCore
import GalleyStore

/// Where a PostgreSQL store keeps its files: content-addressed blobs, written once and never
/// changed, so two issues (or an issue and its kept zip) with the same bytes share one blob and
/// a reader may cache a blob forever. A folder (`BlobFolder`, which may be a shared mount) or
/// S3-compatible object storage (`S3Blobs`).
///
/// Either way the work around the blobs is local: `staging` (imports in progress) and the
/// store's `root` (sync's downloads) are folders on this machine.
protocol BlobStore: Sendable {
    /// This machine's folder for the store's local work (`staging/`, sync's `downloads/`).
    var root: URL { get }
    var staging: URL { get }
    /// What messages call the blob store.
    var display: String { get }
    /// Whether `address` is a readable local path (else `localFile` fetches a copy).
    var isLocal: Bool { get }

    func createFolders() throws
    /// Where records say the blob is: a path, or an `s3://` address.
    func address(_ sha256: String) -> String
    /// The name messages and `check` give a blob.
    func name(_ sha256: String) -> String
    /// Stores a staged file under its SHA-256 (consuming the staged file). Returns whether this
    /// call created the blob (false: the same bytes were there already).
    func place(_ staged: URL, sha256: String, size: Int64) throws -> Bool
    func remove(_ sha256: String)
    /// Every blob's SHA-256.
    func all() throws -> [String]
    /// What is wrong with the blob, if anything: missing, another size, other content (where
    /// the content can be read here).
    func verify(_ sha256: String, size: Int64) -> String?
    /// A local file with the blob's bytes (a folder's own file; for object storage a cached
    /// copy, fetched and checked against its SHA-256 on first use).
    func localFile(_ sha256: String, size: Int64) throws -> URL
}

extension BlobStore {
    /// What `staging/` holds: imports in progress, or left by one that was killed.
    func staged() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: staging.path)) ?? []).sorted()
    }

    /// Notes in `staging/` that the blobs may hold leftovers (a commit whose outcome is not
    /// known): the next open finds staging not empty and sweeps what no row names.
    func noteUnsettled() {
        FileManager.default.createFile(atPath: staging.appending(path: "unsettled-\(UUID().uuidString.lowercased())").path, contents: nil)
    }

    /// The fan-out path of a blob below some folder: `<folder>/ab/abcdef…`.
    static func fanOut(_ folder: URL, _ sha256: String) -> URL {
        folder.appending(path: String(sha256.prefix(2))).appending(path: sha256)
    }

    /// Whether `name` looks like a blob's name (64 lowercase hex digits).
    static func isBlobName(_ name: some StringProtocol) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}

/// Blobs in a folder: `<root>/<first two hex digits>/<sha256>`. The folder may be a mount several
/// machines share: a blob appears under its name by `rename(2)` from `staging/` (the same
/// filesystem) only once it is whole.
struct BlobFolder: BlobStore {
    let root: URL

    var staging: URL { root.appending(path: "staging") }
    var display: String { root.path }
    var isLocal: Bool { true }

    func url(_ sha256: String) -> URL { Self.fanOut(root, sha256) }
    func address(_ sha256: String) -> String { url(sha256).path }
    func name(_ sha256: String) -> String { "blobs/\(sha256.prefix(2))/\(sha256)" }

    func createFolders() throws {
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
    }

    func place(_ staged: URL, sha256: String, size: Int64) throws -> Bool {
        let target = url(sha256)
        if FileStatus(target.path)?.kind == .file {
            try? FileManager.default.removeItem(at: staged)
            return false
        }
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard rename(staged.path, target.path) == 0 else {
            let code = errno
            throw GalleyError("cannot store \(name(sha256)): \(String(cString: strerror(code)))", id: .storeFailed, path: root.path,
                              hint: "Check the free space and permissions of the blob folder.")
        }
        return true
    }

    func remove(_ sha256: String) {
        try? FileManager.default.removeItem(at: url(sha256))
    }

    func all() throws -> [String] {
        let manager = FileManager.default
        var found: [String] = []
        for folder in ((try? manager.contentsOfDirectory(atPath: root.path)) ?? []).sorted()
        where folder.utf8.count == 2 && folder.allSatisfy(\.isHexDigit) {
            for name in ((try? manager.contentsOfDirectory(atPath: root.appending(path: folder).path)) ?? []).sorted()
            where name.hasPrefix(folder) && Self.isBlobName(name) {
                found.append(name)
            }
        }
        return found
    }

    func verify(_ sha256: String, size: Int64) -> String? {
        let url = url(sha256)
        guard let status = FileStatus(url.path), status.kind == .file else { return "missing" }
        if status.size != size { return "\(status.size) bytes, recorded \(size)" }
        if (try? FileDigest.of(url.path).sha256) != sha256 { return "content differs from its checksum" }
        return nil
    }

    func localFile(_ sha256: String, size: Int64) throws -> URL { url(sha256) }
}
