import Foundation
internal import CArchive
import GalleyCore

/// Writes regular files under one folder through libarchive's disk writer with its secure
/// extraction options, streaming each file's content in chunks. The only file in Galley that
/// touches CArchive's disk writer.
///
/// - `ARCHIVE_EXTRACT_SECURE_NODOTDOT`: a name with a `..` component is refused.
/// - `ARCHIVE_EXTRACT_SECURE_SYMLINKS`: a name whose path runs through a symbolic link is refused.
/// - `ARCHIVE_EXTRACT_NO_OVERWRITE`: a second file with a name already written is refused (a
///   name collision never replaces a file).
/// - `ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS` cannot apply, since the writer is given the folder's
///   absolute path; a name starting with `/` is refused here instead.
///
/// Every file gets mode 0644 and folders 0755 whatever the archive said; no owner, time, ACL
/// or extended attribute is restored.
public final class SecureDiskWriter {
    private let disk: OpaquePointer
    private let entry: OpaquePointer
    /// The folder with every symbolic link in its own path resolved, so that the secure-symlinks
    /// check only ever judges the names below it.
    public let root: String
    private var current: String?

    public init(root: URL) throws {
        try ProcessEnvironment.requireArchiveSettings()  // a UTF-8 locale, or libarchive cannot name non-ASCII files
        guard let resolved = realpath(root.path, nil) else {
            throw GalleyError("cannot resolve the folder: \(String(cString: strerror(errno)))", id: .inputUnreadable, path: root.path)
        }
        self.root = String(cString: resolved)
        free(resolved)
        guard let disk = archive_write_disk_new() else { throw GalleyError("libarchive could not allocate a disk writer") }
        guard let entry = archive_entry_new() else {
            archive_write_free(disk)
            throw GalleyError("libarchive could not allocate an entry")
        }
        self.disk = disk
        self.entry = entry
        let flags = ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_NO_OVERWRITE
        guard archive_write_disk_set_options(disk, flags) == ARCHIVE_OK else {
            let message = libarchiveError(disk)
            archive_entry_free(entry)
            archive_write_free(disk)
            throw GalleyError("libarchive refused the secure options: \(message)")
        }
    }

    deinit {
        archive_entry_free(entry)
        archive_write_free(disk)
    }

    /// Starts the file `name` (relative to `root`, `/`-separated). With a `size`, writing more
    /// than it is an error.
    public func begin(_ name: String, size: Int64?) throws {
        guard !name.isEmpty, !name.hasPrefix("/") else { throw refusal(name, "is not a relative path") }
        let path = root + "/" + name
        archive_entry_clear(entry)
        archive_entry_set_pathname_utf8(entry, path)
        archive_entry_set_filetype(entry, galley_AE_IFREG)
        archive_entry_set_perm(entry, 0o644)
        if let size { archive_entry_set_size(entry, size) }
        guard archive_write_header(disk, entry) == ARCHIVE_OK else { throw refusal(name, libarchiveError(disk)) }
        current = name
    }

    /// Appends a chunk to the current file.
    public func write(_ chunk: ArraySlice<UInt8>) throws {
        guard let current else { throw GalleyError("no file started") }
        let written = chunk.withUnsafeBytes { archive_write_data(disk, $0.baseAddress, $0.count) }
        guard written == chunk.count else {
            throw GalleyError("cannot write: \(libarchiveError(disk))", id: .outputUnwritable, path: root + "/" + current)
        }
    }

    /// Ends the current file.
    public func finish() throws {
        guard let current else { return }
        self.current = nil
        guard archive_write_finish_entry(disk) == ARCHIVE_OK else {
            throw GalleyError("cannot write: \(libarchiveError(disk))", id: .outputUnwritable, path: root + "/" + current)
        }
    }

    private func refusal(_ name: String, _ why: String) -> GalleyError {
        GalleyError("refusing to extract `\(name)`: \(why)", id: .inputUnreadable, path: root,
                    hint: "The zip names a file outside its folder, through a link, or twice; `galley validate` reports which.")
    }
}
