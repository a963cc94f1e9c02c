import Foundation
import GalleyCore

/// Files by content: `<root>/<first two hex digits>/<sha256>`, written once and never changed, so
/// two issues (or an issue and its kept zip) with the same bytes share one file and a reader can
/// cache a blob forever. `staging/` holds imports in progress. The folder may be a mount several
/// machines share: a blob appears under its name by `rename(2)` only once it is whole.
struct BlobFolder: Sendable {
    let root: URL

    var staging: URL { root.appending(path: "staging") }

    /// Where the blob with this SHA-256 lives (whether or not it is there).
    func url(_ sha256: String) -> URL {
        root.appending(path: String(sha256.prefix(2))).appending(path: sha256)
    }

    /// The name messages and `check` give a blob.
    func name(_ sha256: String) -> String { "blobs/\(sha256.prefix(2))/\(sha256)" }

    func createFolders() throws {
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
    }

    /// Moves a staged file to its content address. Returns whether this call created the blob
    /// (false: the same bytes were there already, and the staged copy is removed).
    func place(_ staged: URL, sha256: String) throws -> Bool {
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

    /// Every blob's SHA-256 (a walk of the 256 fan-out folders).
    func all() -> [String] {
        let manager = FileManager.default
        var found: [String] = []
        for folder in ((try? manager.contentsOfDirectory(atPath: root.path)) ?? []).sorted()
        where folder.utf8.count == 2 && folder.allSatisfy(\.isHexDigit) {
            for name in ((try? manager.contentsOfDirectory(atPath: root.appending(path: folder).path)) ?? []).sorted()
            where name.hasPrefix(folder) && name.utf8.count == 64 {
                found.append(name)
            }
        }
        return found
    }

    /// What `staging/` holds: imports in progress, or left by one that was killed.
    func staged() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: staging.path)) ?? []).sorted()
    }
}
