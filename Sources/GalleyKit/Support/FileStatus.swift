import Foundation

/// What `stat(2)` says of a path, without Foundation's extra look-ups (owner names and the like).
struct FileStatus {
    enum Kind { case file, directory, symlink, other }

    var kind: Kind
    var size: Int64

    /// Follows symbolic links when `follow` is true; `nil` when the path does not exist.
    init?(_ path: String, follow: Bool = true) {
        var info = stat()
        let result = follow ? stat(path, &info) : lstat(path, &info)
        guard result == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .file
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symlink
        default: kind = .other
        }
        size = Int64(info.st_size)
    }

    static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }
}
