import Foundation
import GalleyCore
import GalleyFormats

/// The files a zip holds, as the references and media checks need them: the central directory
/// Galley read (shared, not copied), the files' entry numbers in name order to find a name by
/// binary search, and what the full check's pass sniffed of each file, by entry number.
///
/// Compact on purpose: a dictionary from name to facts was 9.5 MB of a 30,000-article
/// validate (60,000 files, 131,072 buckets of a slice and its facts); this is 20 bytes a file.
struct ZipContents: Sendable {
    /// The top folder (`<apple_id>`).
    package let top: String
    private let directory: ZipDirectory
    /// Numbers of the directory's file entries (not folders), sorted by name. The container
    /// checks refused names given twice and names outside the top folder.
    private let byName: [Int32]
    /// What the full check's pass saw of each entry's first bytes, by entry number; empty until
    /// the pass sniffs its first file, so copies made before the pass share nothing to copy.
    private var sniffs: [Sniffed?] = []
    /// What each SVG file the full check read would run, apart from the sniffs: one in
    /// thousands of files is an SVG.
    package var svgs: [String: SVGInspection] = [:]

    struct FileFacts {
        package var size: UInt64
        /// What the first bytes say, when the full check read them (the bytes are not kept).
        var sniffed: Sniffed?
    }

    /// A media file's format and pixel size from its first bytes: 12 bytes, not a
    /// `PixelSize?`'s 17 and padding.
    struct Sniffed: Sendable {
        package let format: MediaFormat?
        private let width: Int32
        private let height: Int32

        package init(_ head: [UInt8]) {
            format = MediaFormat.sniff(head)
            let size = format.flatMap { MediaChecks.dimensions(head, $0) }
            width = size.map { Int32(clamping: $0.width) } ?? -1
            height = size.map { Int32(clamping: $0.height) } ?? -1
        }

        package var pixelSize: PixelSize? { width < 0 ? nil : PixelSize(width: Int(width), height: Int(height)) }
    }

    /// The files the central directory lists, by name relative to the top folder, before any
    /// content is read.
    init(_ directory: ZipDirectory, top: String) {
        self.top = top
        self.directory = directory
        byName = directory.fileNumbersByName(in: top)
    }

    /// The entry number of the file `name` (relative to the top folder), if the zip has it.
    func entryNumber(_ name: some StringProtocol) -> Int? {
        var wanted = Substring(name)
        return wanted.withUTF8 { directory.entry(named: $0, from: top.utf8.count + 1, in: byName) }
    }

    /// The facts of entry `number`.
    func facts(_ number: Int) -> FileFacts {
        FileFacts(size: directory.entries[number].uncompressedSize, sniffed: sniffs.isEmpty ? nil : sniffs[number])
    }

    /// Every file's entry number and name relative to the top folder, in name order (byte
    /// order of UTF-8).
    var files: some Sequence<(number: Int, name: String)> {
        let prefix = top.utf8.count + 1
        return byName.lazy.map { [directory] number in
            (Int(number), directory.entries[Int(number)].withNameBytes { String(decoding: $0[prefix...], as: UTF8.self) })
        }
    }

    /// How many entries the directory lists (files and folders): entry numbers are below it.
    var entryCount: Int { directory.entries.count }

    /// Records what the pass sniffed of entry `number`.
    mutating func setSniffed(_ sniffed: Sniffed, entry number: Int) {
        if sniffs.isEmpty { sniffs = Array(repeating: nil, count: directory.entries.count) }
        sniffs[number] = sniffed
    }
}
