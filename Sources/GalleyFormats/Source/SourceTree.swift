import Foundation
import GalleyCore

/// A file inside an issue source folder, found and checked.
public struct SourceFile: Sendable, Hashable {
    /// Path relative to the issue folder, `/`-separated, without `.` or `..`.
    public var relativePath: String
    /// The absolute path. Text, not a `URL`: a pack makes one for every file of every article
    /// and looks each up by path several times; making the URLs and asking them their paths
    /// was 0.5 CPU-seconds of packing 30,000 articles.
    public var path: String
    public var size: Int64

    public init(relativePath: String, path: String, size: Int64) {
        self.relativePath = relativePath
        self.path = path
        self.size = size
    }
}

/// The issue source folder: resolves paths written in source files to real files, refusing
/// anything that would leave the folder, including through a symbolic link (never followed
/// outside).
///
/// Made once per issue (`IssueSource.tree`): resolving the root's own links is a system call
/// per component, and each article's files are resolved against it.
package struct SourceTree: Sendable {
    package let root: URL
    private let rootPath: String
    private let realRoot: String
    /// Folders already found to be plain folders, not links; shared by the tree's copies.
    private let plainFolders = PlainFolders()

    package init(root: URL) {
        self.root = root.standardizedFileURL
        self.rootPath = self.root.path
        self.realRoot = self.root.resolvingSymlinksInPath().path
    }

    /// The folders below the issue folder (relative paths) that `resolveFile` found to be
    /// folders and not symbolic links, so that each is looked up once per pack, not once per
    /// file under it: every asset's path was checked step by step, `articles`, then
    /// `articles/<slug>`, then the file, and then the file again (`stat`) and its readability,
    /// five system calls a file, 300,000 for the 30,000-article issue. A folder swapped for a
    /// link after it was looked up is not seen; nor was one swapped between the look-up and the
    /// read before, so this gives nothing away. Shared by the threads that load articles.
    ///
    /// Bounded, so memory stays flat at any size: articles are loaded a batch at a time, in
    /// folder order, so the folders in use are a few dozen, not one per article of the issue.
    /// When `limit` is reached it starts again.
    private final class PlainFolders: @unchecked Sendable {
        // @unchecked: `paths` is only touched under `lock`.
        private let lock = NSLock()
        private var paths: Set<String> = []
        private let limit = 256

        func contains(_ path: String) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            return paths.contains(path)
        }

        func insert(_ path: String) {
            lock.lock()
            if paths.count >= limit { paths.removeAll(keepingCapacity: true) }
            paths.insert(path)
            lock.unlock()
        }
    }

    package func url(_ relativePath: String) -> URL {
        relativePath.isEmpty ? root : root.appending(path: relativePath)
    }

    /// The absolute path of `relativePath` (already free of `.` and `..`), made as text: the
    /// checks on every step of every asset path need no URL.
    func path(_ relativePath: String) -> String {
        relativePath.isEmpty ? rootPath : rootPath.hasSuffix("/") ? rootPath + relativePath : rootPath + "/" + relativePath
    }

    /// Whether a path relative to the folder resolves, through any symbolic links, to a place
    /// inside it.
    func staysInside(_ relativePath: String) -> Bool {
        let resolved = url(relativePath).resolvingSymlinksInPath().path
        return resolved == realRoot || resolved.hasPrefix(realRoot + "/")
    }

    /// An error when `relativePath` is a symbolic link leading outside the folder (never followed).
    func linkOutside(_ relativePath: String) -> Diagnostic? {
        guard isSymbolicLink(relativePath), !staysInside(relativePath) else { return nil }
        return Diagnostic(
            .sourceSymlinkOutside,
            "`\(relativePath)` is a symbolic link to a place outside the issue folder; it is not followed",
            at: SourceLocation(path: relativePath), hint: "Replace the link with the file or folder itself.")
    }

    func isSymbolicLink(_ relativePath: String) -> Bool {
        FileStatus(path(relativePath), follow: false)?.kind == .symlink
    }

    /// What `resolveFile` found: the file, or the problem with the path.
    package enum Resolved {
        case file(SourceFile)
        case problem(Diagnostic)
    }

    /// Resolves `written` (as an editor wrote it, relative to the folder `directory`) to a
    /// readable regular file inside the issue folder.
    package func resolveFile(
        _ written: String, from directory: String, at location: SourceLocation, what: String
    ) -> Resolved {
        func fail(_ check: Check, _ message: String, _ hint: String) -> Resolved {
            .problem(Diagnostic(check, message, at: location, hint: hint))
        }
        if written.isEmpty {
            return fail(.sourcePathUnsafe, "the \(what) path is empty", "Give the file's name, e.g. `photo.jpg`.")
        }
        if let problem = SourceTree.pathProblem(written) {
            return fail(.sourcePathUnsafe, "the \(what) path `\(written)` \(problem)",
                        "Use a relative path with forward slashes, e.g. `images/photo.jpg`.")
        }
        var parts: [String] = directory.isEmpty ? [] : directory.split(separator: "/").map(String.init)
        for part in written.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..":
                if parts.isEmpty {
                    return fail(.sourcePathOutside, "the \(what) path `\(written)` leaves the issue folder",
                                "Copy the file into the issue folder and refer to it from there.")
                }
                parts.removeLast()
            default: parts.append(String(part))
            }
        }
        // `.`, `a/..` from the issue folder, `../..` from an article's: the issue folder itself.
        guard let name = parts.last else {
            return fail(.sourceFileMissing, "the \(what) path `\(written)` is the issue folder, not a file",
                        "Name a file inside it.")
        }
        if let problem = SourceTree.nameProblem(name) {
            return fail(.sourceNameUnsafe, "the file name `\(name)` \(problem)",
                        "Rename the file using letters, digits, `.`, `-` and `_`.")
        }
        // Check every step below the issue folder for symbolic links that lead outside, before
        // touching the file: one lstat a step not already known to be a plain folder, the full
        // resolution only for a link. The file's own lstat is its status unless it is a link.
        // Each step's path is the one before it and a part (joining the parts again at every
        // step was a tenth of resolving a file).
        var fileStatus: FileStatus?
        var prefix = ""
        for (index, part) in parts.enumerated() {
            let isFile = index == parts.count - 1
            prefix = index == 0 ? part : prefix + "/" + part
            if !isFile && plainFolders.contains(prefix) { continue }
            let status = FileStatus(path(prefix), follow: false)
            switch status?.kind {
            case .symlink?:
                if !staysInside(prefix) {
                    return fail(
                        .sourceSymlinkOutside,
                        "`\(prefix)` is a symbolic link to a place outside the issue folder; it is not followed",
                        "Replace the link with a copy of the file inside the issue folder.")
                }
            case .directory? where !isFile: plainFolders.insert(prefix)
            default: if isFile { fileStatus = status }
            }
        }
        let relative = prefix
        let resolvedPath = path(relative)
        guard let status = fileStatus ?? FileStatus(resolvedPath) else {
            var hint = "Check the spelling; paths are relative to the folder of the file that names them."
            if let near = nearestName(to: name, in: parts.dropLast().joined(separator: "/")) {
                hint = "Did you mean `\(near)`?"
            }
            return fail(.sourceFileMissing, "the \(what) file `\(written)` does not exist", hint)
        }
        if status.kind == .directory {
            return fail(.sourceFileMissing, "the \(what) path `\(written)` is a folder, not a file",
                        "Name a file inside it.")
        }
        guard status.kind == .file, FileStatus.isReadable(resolvedPath) else {
            return fail(.sourceFileUnreadable, "the \(what) file `\(written)` cannot be read",
                        "Check the file's permissions (it must be a readable regular file).")
        }
        return .file(SourceFile(relativePath: relative, path: resolvedPath, size: status.size))
    }

    /// The file in `directory` whose name is nearest to `name` (case aside), for a hint: none
    /// from a folder of more than `hintFolderLimit` entries, nor past `nearest`'s budget.
    private func nearestName(to name: String, in directory: String) -> String? {
        guard let names = rawDirectoryNames(path(directory), limit: Self.hintFolderLimit) else { return nil }
        return nearest(to: name, among: names.lazy.map { String(decoding: $0, as: UTF8.self) },
                       within: max(2, name.count / 4), folding: true)
    }

    /// The most entries a folder may hold for a missing file's hint to look through it.
    static let hintFolderLimit = 1_000

    /// What makes a written path unusable, if anything.
    package static func pathProblem(_ path: String) -> String? {
        // On the UTF-8 bytes: `/`, `~`, a backslash and the control characters are single bytes
        // that no other character's encoding contains (Foundation's `contains` and a scan of
        // scalars were a tenth of resolving a file), and a character check misses one that a
        // combining mark follows (`/\u{301}x.jpg` is still absolute to the file system). The
        // drive-path test counts characters, so it runs only on a path that has a colon.
        let bytes = path.utf8
        if let first = bytes.first, first == UInt8(ascii: "/") || first == UInt8(ascii: "~") { return "is absolute" }
        if bytes.contains(UInt8(ascii: "\\")) { return "contains a backslash" }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "contains a control character" }
        if bytes.contains(UInt8(ascii: ":")), path.count >= 2, path.dropFirst().first == ":", path.first?.isLetter == true {
            return "is a drive path"
        }
        return nil
    }

    /// The characters Windows refuses in a file name, as bytes.
    static let unsafeNameBytes: [UInt8] = Array("\\:*?\"<>|".utf8)

    /// What makes a file name unsafe inside a zip, if anything.
    static func nameProblem(_ name: String) -> String? {
        if name.utf8.count > 255 { return "is longer than 255 bytes" }
        if name.hasPrefix(" ") || name.hasSuffix(" ") { return "starts or ends with a space" }
        if name.hasSuffix(".") { return "ends with a dot" }
        // Every character looked for is ASCII: one byte, which no other character's UTF-8 holds.
        for byte in name.utf8 {
            if byte < 0x20 || byte == 0x7F { return "contains a control character" }
            if Self.unsafeNameBytes.contains(byte) { return "contains `\(Character(Unicode.Scalar(byte)))`" }
        }
        return nil
    }

    /// `zipSafeName`, cut to `maxBytes` (it is ASCII by then): for a file name made from text
    /// an input gives (an article's global id, a feed's package name), which may be far longer
    /// than the 255 bytes a file system takes.
    package static func zipSafeName(_ name: String, maxBytes: Int) -> String {
        String(zipSafeName(name).prefix(maxBytes))
    }

    /// A name in the zip producer profile (`[A-Za-z0-9._-]`), made from any file name.
    package static func zipSafeName(_ name: String) -> String {
        // Bytes, not Characters, and ASCII ranges, not `CharacterSet.alphanumerics` (whose ASCII
        // members are these): pack names every media file, and the Foundation way was 1% of
        // packing 30,000 articles.
        var out: [UInt8] = []
        out.reserveCapacity(name.utf8.count)
        for scalar in name.unicodeScalars {
            let value = scalar.value
            let keep = (0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)
                || value == 0x2E || value == 0x5F || value == 0x2D  // . _ -
            let byte: UInt8 = keep ? UInt8(value) : 0x2D
            if byte == 0x2D && out.last == 0x2D { continue }
            out.append(byte)
        }
        // No leading `.` or `-`.
        guard let start = out.firstIndex(where: { $0 != 0x2E && $0 != 0x2D }) else { return "file" }
        return String(decoding: out[start...], as: UTF8.self)
    }
}
