import Foundation

/// Writing a file so that its path never holds a half-written one: the text goes to a hidden
/// temporary file beside it, which is then renamed into place.
package enum AtomicFile {
    /// A hidden temporary name beside `url`, unique to this process and call:
    /// `.<name>.<pid>-<random>.galley-tmp`. Every temporary Galley leaves beside a user's file
    /// has this shape, so it can be recognised and cleaned.
    package static func temporaryName(for url: URL) -> URL {
        url.deletingLastPathComponent()
            .appending(path: ".\(url.lastPathComponent).\(getpid())-\(UInt32.random(in: 0...UInt32.max)).galley-tmp")
    }

    /// Removes Galley's temporaries in `folder` (names of `temporaryName`'s shape): those of
    /// `pid` when it is given (a run cut short by a signal cleans up after itself), else those
    /// whose process is gone and that nothing has written for a minute (a run killed outright,
    /// found by the next run into the folder; the minute spares a run on another machine that
    /// shares the folder, whose pid means nothing here but which writes as it goes).
    /// Returns the names removed.
    @discardableResult
    package static func removeTemporaries(in folder: URL, of pid: Int32? = nil) -> [String] {
        var removed: [String] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
            guard name.hasPrefix("."), name.hasSuffix(".galley-tmp"), let owner = Self.owner(of: name) else { continue }
            let url = folder.appending(path: name)
            let remove = pid.map { $0 == owner } ?? (kill(owner, 0) != 0 && errno == ESRCH && Self.untouched(url, for: 60))
            // A scratch folder (pack's thumbnails) goes with its contents.
            if remove, removeFolderOrFile(url) { removed.append(name) }
        }
        return removed
    }

    /// Removes a file, or a folder and what is in it, even while other threads of this
    /// process still add files to it (a signal's clean-up runs beside pack's workers): a file
    /// that appears during the removal makes it try again, and once the folder is gone nothing
    /// can be written into it (nothing makes it again).
    @discardableResult
    package static func removeFolderOrFile(_ url: URL) -> Bool {
        for _ in 0..<50 {
            do {
                try FileManager.default.removeItem(at: url)
                return true
            } catch {
                if FileStatus(url.path, follow: false) == nil { return true }
                usleep(2_000)
            }
        }
        return false
    }

    private static func untouched(_ url: URL, for seconds: TimeInterval) -> Bool {
        guard let modified = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date else { return false }
        return Date().timeIntervalSince(modified) > seconds
    }

    /// The process id in `.<name>.<pid>-<random>.galley-tmp`.
    private static func owner(of name: String) -> Int32? {
        let stem = name.dropLast(".galley-tmp".count)
        guard let tag = stem.split(separator: ".").last, let dash = tag.firstIndex(of: "-") else { return nil }
        return Int32(tag[..<dash])
    }

    /// Writes `text` to `url`. An existing file is replaced only when `replace` is true.
    /// `permissions` are the new file's from the start (0600 for a secret: never readable by
    /// others, not even before a chmod).
    package static func write(_ text: String, to url: URL, replace: Bool, permissions: mode_t = 0o644) throws {
        if !replace, FileManager.default.fileExists(atPath: url.path) {
            throw GalleyError("the output already exists", id: .outputExists, path: url.path, hint: "Pass --force to replace it.")
        }
        let temporary = temporaryName(for: url)
        do {
            try writeFile(temporary.path, text, permissions: permissions)
            if rename(temporary.path, url.path) != 0 {
                throw GalleyError("cannot write: \(String(cString: strerror(errno)))", id: .outputUnwritable, path: url.path)
            }
        } catch {
            unlink(temporary.path)
            if let error = error as? GalleyError { throw error }
            let (reason, hint) = FileSystemError.describe(error)
            throw GalleyError("cannot write: \(reason)", id: .outputUnwritable, path: url.path, hint: hint)
        }
    }
}

/// Creates the folders an output needs (as `mkdir -p`), remembering which it made, so that a
/// failed run can take them away again and leave the user's files as they were.
public enum FolderMaker {
    /// Makes `folder` and its missing parents; returns those it created, deepest first.
    /// `what` names the folder in an error ("the output folder", "the store's folder").
    public static func make(_ folder: URL, what: String = "the output folder") throws -> [URL] {
        var missing: [URL] = []
        var current = folder.standardizedFileURL
        while FileStatus(current.path) == nil, current.path != "/" {
            missing.append(current)
            current = current.deletingLastPathComponent()
        }
        if let status = FileStatus(current.path), status.kind != .directory {
            throw GalleyError("cannot create \(what): a part of the path is a file, not a folder", id: .outputUnwritable, path: current.path,
                              hint: "Check the path: a file stands where a folder should be.")
        }
        var made: [URL] = []
        for url in missing.reversed() {
            do {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
                made.insert(url, at: 0)
            } catch where FileStatus(url.path)?.kind == .directory {
                // Another process made it meanwhile (two first imports into one new store):
                // it is there, and not this call's to remove.
                continue
            } catch {
                removeEmpty(made)
                let (reason, hint) = FileSystemError.describe(error)
                throw GalleyError("cannot create \(what): \(reason)", id: .outputUnwritable, path: url.path, hint: hint)
            }
        }
        return made
    }

    /// Removes folders `make` created, deepest first, as long as they are empty.
    public static func removeEmpty(_ created: [URL]) {
        for url in created { _ = rmdir(url.path) }
    }
}
