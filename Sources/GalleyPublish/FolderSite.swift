import Foundation
import GalleyCore

/// A site in a folder: each file written through a temporary file beside it and renamed
/// into place, so a web server reading it sees the old file or the new one, never half.
struct FolderSite: SiteTarget {
    let root: URL

    var display: String { root.path }

    func prepare() throws {
        do {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        } catch {
            throw GalleyError("cannot make the folder to publish into: \(error.localizedDescription)", id: .outputUnwritable,
                              path: root.path, hint: "Check the path and its permissions.")
        }
    }

    func size(_ path: String) throws -> Int64? {
        guard let status = FileStatus(root.appending(path: path).path), status.kind == .file else { return nil }
        return status.size
    }

    func read(_ path: String) throws -> Data? {
        try? Data(contentsOf: root.appending(path: path))
    }

    func write(_ data: Data, at path: String, headers: SiteHeaders) throws {
        let target = root.appending(path: path)
        try makeParent(target)
        let before = FileStatus(target.path).map { $0.modified / 1_000_000_000 }
        do {
            try data.write(to: target, options: .atomic)
        } catch {
            throw GalleyError("cannot write \(path): \(error.localizedDescription)", id: .outputUnwritable, path: target.path,
                              hint: "Check the folder's free space and permissions; the site is left as the last publish made it.")
        }
        // Web servers make validators of the time to the second and the size (nginx's ETag is
        // both in hex, Last-Modified the first): a feed rewritten within the second at the same
        // size would keep its ETag, and readers would be told 304 for the new feed.
        if let before, let after = FileStatus(target.path).map({ $0.modified / 1_000_000_000 }), after <= before {
            var times = [timespec(tv_sec: Int(before + 1), tv_nsec: 0), timespec(tv_sec: Int(before + 1), tv_nsec: 0)]
            utimensat(AT_FDCWD, target.path, &times, 0)
        }
    }

    func copy(_ source: String, sha256: String, at path: String, headers: SiteHeaders) throws {
        let target = root.appending(path: path)
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
    }

    /// Removes the file and the folders it leaves empty.
    func remove(_ path: String) -> Bool {
        let target = root.appending(path: path)
        guard unlink(target.path) == 0 else { return false }
        var folder = target.deletingLastPathComponent()
        while folder.path.count > root.path.count, rmdir(folder.path) == 0 {
            folder = folder.deletingLastPathComponent()
        }
        return true
    }

    func makeParent(_ target: URL) throws {
        do {
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw GalleyError("cannot make \(target.deletingLastPathComponent().path): \(error.localizedDescription)", id: .outputUnwritable,
                              path: target.path, hint: "Check the folder's permissions.")
        }
    }
}
