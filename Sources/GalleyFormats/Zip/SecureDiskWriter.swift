import Foundation
import GalleyCore
import Glibc

/// Writes regular files under one folder, streaming each file's content in chunks, with the
/// guarantees of libarchive's secure extraction options:
///
/// - a name with an empty, `.` or `..` component, or starting with `/`, is refused;
/// - a name whose path runs through a symbolic link is refused: every folder is opened relative
///   to the one above it with `O_NOFOLLOW`, and every file is created with `O_NOFOLLOW`;
/// - a second file with a name already written is refused (`O_EXCL`): a name collision never
///   replaces a file.
///
/// Every file gets mode 0644 and folders 0755 (less the umask) whatever the archive said; no
/// owner, time, ACL or extended attribute is restored.
///
/// Written here rather than through libarchive's disk writer, which this type wrapped before:
/// that writer is handed one absolute path per file and checks it by walking every component
/// from the working folder down (an `fstatat`, an `openat` and a `close` per component, plus
/// `umask` and `fcntl` calls: about 20 system calls per file against the 3 here), which was the
/// largest part of an import's kernel time on issues of many small files (issue 12). Folders are
/// opened once and kept open (by relative path) while files are written into them.
public final class SecureDiskWriter {
    /// The folder with every symbolic link in its own path resolved, so that the link check
    /// only ever judges the names below it.
    public let root: String
    private let rootDescriptor: Int32
    /// Open folders below the root, by their path.
    private var folders: [String: Int32] = [:]
    private var current: (name: String, descriptor: Int32, limit: Int64?, written: Int64)?

    /// At most this many folders stay open; past it, all are closed and opened again on demand.
    static let openFolderLimit = 128

    public init(root: URL) throws {
        guard let resolved = realpath(root.path, nil) else {
            throw GalleyError("cannot resolve the folder: \(String(cString: strerror(errno)))", id: .inputUnreadable, path: root.path)
        }
        self.root = String(cString: resolved)
        free(resolved)
        let descriptor = open(self.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw GalleyError("cannot open the folder: \(String(cString: strerror(errno)))", id: .outputUnwritable, path: self.root)
        }
        rootDescriptor = descriptor
    }

    deinit {
        if let current { close(current.descriptor) }
        for descriptor in folders.values { close(descriptor) }
        close(rootDescriptor)
    }

    /// Starts the file `name` (relative to `root`, `/`-separated). With a `size`, writing more
    /// than it is an error.
    public func begin(_ name: String, size: Int64?) throws {
        if current != nil { try finish() }
        guard !name.isEmpty, !name.hasPrefix("/") else { throw refusal(name, "is not a relative path") }
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        for component in components where component.isEmpty || component == "." || component == ".." || component.utf8.contains(0) {
            throw refusal(name, component == ".." ? "it climbs out of the folder (`..`)" : "it has an empty, `.` or NUL component")
        }
        let parent = try folder(components.dropLast(), of: name)
        let leaf = String(components[components.count - 1])
        let descriptor = openat(parent, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            if code == EEXIST { throw refusal(name, "a file of that name was already written") }
            if code == ELOOP { throw refusal(name, "it is a symbolic link") }
            throw GalleyError("cannot create the file: \(String(cString: strerror(code)))", id: .outputUnwritable, path: root + "/" + name)
        }
        current = (name, descriptor, size, 0)
    }

    /// Appends a chunk to the current file.
    public func write(_ chunk: ArraySlice<UInt8>) throws {
        guard var file = current else { throw GalleyError("no file started") }
        if let limit = file.limit, file.written + Int64(chunk.count) > limit {
            throw GalleyError("cannot write: more bytes than the \(limit) declared", id: .outputUnwritable, path: root + "/" + file.name)
        }
        try chunk.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let done = Glibc.write(file.descriptor, base + offset, bytes.count - offset)
                if done < 0 {
                    if errno == EINTR { continue }
                    throw GalleyError("cannot write: \(String(cString: strerror(errno)))", id: .outputUnwritable, path: root + "/" + file.name)
                }
                offset += done
            }
        }
        file.written += Int64(chunk.count)
        current = file
    }

    /// Ends the current file.
    public func finish() throws {
        guard let file = current else { return }
        current = nil
        guard close(file.descriptor) == 0 || errno == EINTR else {
            throw GalleyError("cannot write: \(String(cString: strerror(errno)))", id: .outputUnwritable, path: root + "/" + file.name)
        }
    }

    /// The open folder at `components` below the root, made (0755) and opened one component at
    /// a time, each relative to the one above and never through a link.
    private func folder(_ components: ArraySlice<Substring>, of name: String) throws -> Int32 {
        guard let last = components.last else { return rootDescriptor }
        let path = components.joined(separator: "/")
        if let open = folders[path] { return open }
        if folders.count >= Self.openFolderLimit {
            for descriptor in folders.values { close(descriptor) }
            folders.removeAll()
        }
        let parent = try folder(components.dropLast(), of: name)
        let component = String(last)
        var descriptor = openat(parent, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0 && errno == ENOENT {
            if mkdirat(parent, component, 0o755) != 0 && errno != EEXIST {
                throw GalleyError("cannot make the folder: \(String(cString: strerror(errno)))", id: .outputUnwritable, path: root + "/" + path)
            }
            descriptor = openat(parent, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        guard descriptor >= 0 else {
            let code = errno
            if code == ELOOP || code == ENOTDIR { throw refusal(name, "its path runs through a symbolic link or a file") }
            throw GalleyError("cannot open the folder: \(String(cString: strerror(code)))", id: .outputUnwritable, path: root + "/" + path)
        }
        folders[path] = descriptor
        return descriptor
    }

    private func refusal(_ name: String, _ why: String) -> GalleyError {
        GalleyError("refusing to extract `\(name)`: \(why)", id: .inputUnreadable, path: root,
                    hint: "The zip names a file outside its folder, through a link, or twice; `galley validate` reports which.")
    }
}
