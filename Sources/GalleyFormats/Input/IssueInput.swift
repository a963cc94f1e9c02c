import Foundation
import GalleyCore

/// What a path given to `validate` or `render` is, decided by its content (a file starting
/// `PK` is a zip, `{` a manifest) rather than by its name: one detector for every command.
public enum IssueInput: Sendable, Equatable {
    /// An issue source folder: it has an issue file or an `articles/` folder.
    case source(URL)
    /// A folder holding issue zips (sorted by name; hidden files left out), each path spelt from
    /// the folder's path as given, so reports name them as the user did.
    case zipFolder([String])
    /// An issue zip, or any file that is not a manifest (the zip checks say what is wrong).
    case zip(URL)
    /// A bare `latest.json`.
    case manifest(URL)

    /// Looks at `path` (following links). Throws `GalleyError` when it does not exist, is neither
    /// a regular file nor a folder (a FIFO would block the read, `/dev/zero` never end), cannot be
    /// read, or is a folder that is neither a source nor holds any zip.
    public static func detect(_ path: String) throws -> IssueInput {
        let url = URL(fileURLWithPath: path)
        guard let status = FileStatus(path) else {
            if FileStatus(path, follow: false)?.kind == .symlink {
                throw GalleyError("a symbolic link that leads nowhere (or in a loop)", id: .inputNotFound, path: path, hint: "Give the file or folder it should point at.")
            }
            throw GalleyError("no such file or folder", id: .inputNotFound, path: path)
        }
        if status.kind == .directory {
            let isSource = IssueSourceLoader.issueFileNames.contains { FileStatus(url.appending(path: $0).path) != nil }
                || FileStatus(url.appending(path: "articles").path) != nil
            if isSource { return .source(url) }
            let zips = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
                .filter { $0.lowercased().hasSuffix(".zip") && !$0.hasPrefix(".") }.sorted()
            guard !zips.isEmpty else {
                throw GalleyError("the folder is neither an issue source (no issue.yaml) nor holds any .zip", id: .inputKind,
                                  path: path, hint: "Give an issue source folder, a zip, a latest.json, or a folder of zips.")
            }
            return .zipFolder(zips.map { path.hasSuffix("/") ? path + $0 : path + "/" + $0 })
        }
        guard status.kind == .file else {
            throw GalleyError("not a regular file (a device, FIFO or socket)", id: .inputKind, path: path,
                              hint: "Give the issue zip, latest.json or source folder itself.")
        }
        guard FileStatus.isReadable(path), let handle = FileHandle(forReadingAtPath: path) else {
            throw GalleyError("cannot read the file", id: .inputUnreadable, path: path)
        }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 64)).map { [UInt8]($0) } ?? []
        let firstText = head.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        if path.lowercased().hasSuffix(".json") || (firstText == UInt8(ascii: "{") && !head.starts(with: [0x50, 0x4B])) {
            return .manifest(url)
        }
        return .zip(url)
    }
}
