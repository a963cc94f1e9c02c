import Foundation
internal import CArchive
import GalleyCore

/// Reads a zip's entries in order with libarchive, streaming their content in chunks. The
/// only file in Galley that touches CArchive's reader. libarchive checks each entry's CRC-32
/// as its data ends; a mismatch or a damaged stream surfaces as `ZipReader.ReadError`.
public final class ZipReader {
    private let archive: OpaquePointer
    private var buffer = [UInt8](repeating: 0, count: 256 * 1024)

    public struct Entry: Sendable {
        /// The name as UTF-8, or as raw bytes decoded leniently when it is not UTF-8.
        public var name: String
        /// The size the headers declare, when they do.
        public var declaredSize: Int64?
        public var isDirectory: Bool
        public var isEncrypted: Bool
    }

    public struct ReadError: Error, Sendable {
        public var message: String
        public var isChecksum: Bool { message.localizedCaseInsensitiveContains("crc") }
        /// The entry inflated to another size than its headers declare.
        public var isSize: Bool { message.localizedCaseInsensitiveContains("wrong size") }
    }

    public init(path: String) throws {
        try ProcessEnvironment.requireArchiveSettings()
        guard let archive = archive_read_new() else { throw GalleyError("libarchive could not allocate a reader") }
        self.archive = archive
        archive_read_support_format_zip(archive)
        guard archive_read_open_filename(archive, path, 64 * 1024) == ARCHIVE_OK else {
            let message = libarchiveError(archive)
            archive_read_free(archive)
            throw GalleyError("cannot open the zip: \(message)", id: .inputUnreadable, path: path)
        }
    }

    deinit { archive_read_free(archive) }

    /// The next entry, or `nil` at the end.
    public func next() throws(ReadError) -> Entry? {
        var entry: OpaquePointer?
        let status = archive_read_next_header(archive, &entry)
        if status == ARCHIVE_EOF { return nil }
        guard status >= ARCHIVE_WARN, let entry else { throw ReadError(message: libarchiveError(archive)) }
        let name: String
        if let utf8 = archive_entry_pathname_utf8(entry) {
            name = String(cString: utf8)
        } else if let raw = archive_entry_pathname(entry) {
            name = String(decoding: UnsafeRawBufferPointer(start: raw, count: strlen(raw)), as: UTF8.self)
        } else {
            name = ""
        }
        return Entry(
            name: name, declaredSize: archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : nil,
            isDirectory: archive_entry_filetype(entry) == galley_AE_IFDIR,
            isEncrypted: archive_entry_is_encrypted(entry) != 0)
    }

    /// Reads the current entry's content, handing each chunk to `body`, and stops (returning
    /// `false`) once more than `limit` bytes came out. Returns `true` when the entry ended
    /// within the limit. Throws when the data is damaged or its CRC does not match.
    public func read(limit: Int64, _ body: (ArraySlice<UInt8>) -> Void) throws(ReadError) -> (bytes: Int64, complete: Bool) {
        var total: Int64 = 0
        let capacity = buffer.count
        while true {
            let count = buffer.withUnsafeMutableBytes { archive_read_data(archive, $0.baseAddress, capacity) }
            if count < 0 { throw ReadError(message: libarchiveError(archive)) }
            if count == 0 { return (total, true) }
            total += Int64(count)
            body(buffer[0..<count])
            if total > limit { return (total, false) }
        }
    }

    /// The next chunk of the current entry's content, or `nil` at its end.
    public func readChunk() throws(ReadError) -> [UInt8]? {
        let capacity = buffer.count
        let count = buffer.withUnsafeMutableBytes { archive_read_data(archive, $0.baseAddress, capacity) }
        if count < 0 { throw ReadError(message: libarchiveError(archive)) }
        return count == 0 ? nil : Array(buffer[0..<count])
    }

    /// Skips the current entry's content without inflating it where the format allows.
    public func skip() throws(ReadError) {
        guard archive_read_data_skip(archive) == ARCHIVE_OK else { throw ReadError(message: libarchiveError(archive)) }
    }
}

/// The message of libarchive's last error on `archive` (a reader, zip writer or disk writer).
func libarchiveError(_ archive: OpaquePointer) -> String {
    (archive_error_string(archive).map { String(cString: $0) } ?? "unknown libarchive error")
        .trimmingCharacters(in: .whitespacesAndNewlines)
}
