import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyFormats

/// `ZipDirectory.read` works out what the extra fields say as it reads them (they are not
/// kept): a link declared in the central directory's extra field, in the local header's only,
/// or in neither.
@Suite struct ZipDirectoryTests {
    /// A stored one-entry zip whose central and local extra fields are given.
    static func zip(name: String, central: [UInt8], local: [UInt8]) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }
        let nameBytes = Array(name.utf8)
        let data = Array("photo".utf8)
        let crc = 0x1234_5678  // the directory is read, not the content: any CRC does
        let localHeader = le32(0x0403_4B50) + le16(20) + le16(0) + le16(0) + le16(0) + le16(0) + le32(crc)
            + le32(data.count) + le32(data.count) + le16(nameBytes.count) + le16(local.count) + nameBytes + local
        let centralHeader = le32(0x0201_4B50) + le16(0x0314) + le16(20) + le16(0) + le16(0) + le16(0) + le16(0)
            + le32(crc) + le32(data.count) + le32(data.count) + le16(nameBytes.count) + le16(central.count) + le16(0)
            + le16(0) + le16(0) + le32(0o100644 << 16) + le32(0) + nameBytes + central
        let body = localHeader + data
        let end = le32(0x0605_4B50) + le16(0) + le16(0) + le16(1) + le16(1) + le32(centralHeader.count) + le32(body.count) + le16(0)
        return body + centralHeader + end
    }

    /// PKWARE's Unix extra field (0x000d) with a link target after its 12 bytes.
    static let pkwareLink: [UInt8] = [0x0D, 0x00, 23, 0] + [UInt8](repeating: 0, count: 12) + Array("/etc/passwd".utf8)
    /// Info-ZIP's extended timestamp (0x5455): what ordinary zips carry.
    static let timestamp: [UInt8] = [0x55, 0x54, 5, 0, 1, 0, 0, 0, 0]

    func read(_ bytes: [UInt8]) throws -> ZipDirectory.Entry {
        let path = Scratch.path("galley-zipdirectory", suffix: ".zip").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let directory = try ZipDirectory.read(path: path, maxEntries: 10)
        return try #require(directory.entries.first)
    }

    /// The local headers and data descriptors, read through one window, are what a parse of
    /// the whole file in memory finds: a zip libarchive streamed (a descriptor after each
    /// entry), with empty, small and over-4-KiB entries, stored and deflated, names of every
    /// length, so reads fall inside the window, across its end and past it.
    @Test func localHeadersAndDescriptorsReadThroughTheWindowAreTheFilesOwn() throws {
        ProcessEnvironment.configureForArchives()
        let path = Scratch.path("galley-zipwindow", suffix: ".zip")
        let writer = try ZipWriter(url: path, hashing: false, allowZip64: false)
        var generator = SeededGenerator(state: 41)
        for number in 0..<300 {
            let name = "top/" + String(repeating: "n", count: 1 + generator.below(150)) + "\(number).bin"
            let size = [0, 1, 100, 3_000, 4_090, 5_000, 20_000][generator.below(7)]
            let data = (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            try writer.addData(name: name, data, mtime: 0, compression: generator.below(2) == 0 ? .store : .deflate)
        }
        _ = try writer.finish()
        let bytes = [UInt8](try Data(contentsOf: path))
        func le16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func le32(_ at: Int) -> Int { le16(at) | le16(at + 2) << 16 }
        let directory = try ZipDirectory.read(path: path.path, maxEntries: 1_000)
        #expect(directory.entries.count == 300)
        var descriptors = 0
        for entry in directory.entries {
            let offset = Int(entry.localHeaderOffset)
            #expect(le32(offset) == 0x0403_4B50)
            let headerLength = 30 + le16(offset + 26) + le16(offset + 28)
            #expect(entry.localHeaderLength == UInt64(headerLength), "\(entry.displayName)")
            #expect(entry.differingLocalName == nil, "\(entry.displayName)")
            if le16(offset + 6) & 0x8 != 0 {
                let dataEnd = offset + headerLength + Int(entry.compressedSize)
                let expected: UInt64 = le32(dataEnd) == 0x0807_4B50 ? 16 : 12
                #expect(entry.descriptorLength == expected, "\(entry.displayName)")
                descriptors += 1
            }
        }
        #expect(descriptors > 0, "libarchive streamed the entries, with descriptors")
    }

    @Test func aLinkInEitherExtraFieldIsDeclaredAndOrdinaryFieldsAreNot() throws {
        let inCentral = try read(Self.zip(name: "a/photo.jpg", central: Self.pkwareLink, local: Self.timestamp))
        #expect(inCentral.declaredLink == "PKWARE Unix extra field (0x000d) with a link target")
        let inLocalOnly = try read(Self.zip(name: "a/photo.jpg", central: Self.timestamp, local: Self.pkwareLink))
        #expect(inLocalOnly.declaredLink == "PKWARE Unix extra field (0x000d) with a link target")
        #expect(inLocalOnly.localHeaderLength == UInt64(30 + 11 + Self.pkwareLink.count))
        let ordinary = try read(Self.zip(name: "a/photo.jpg", central: Self.timestamp, local: Self.timestamp))
        #expect(ordinary.declaredLink == nil)
        #expect(ordinary.name == "a/photo.jpg")
        #expect(ordinary.uncompressedSize == 5)
    }
}

extension ZipDirectoryTests {
    /// The entry stays small: it is kept for each of a big issue's 60,000 files.
    @Test func anEntryIsSeventyTwoBytes() {
        #expect(MemoryLayout<ZipDirectory.Entry>.stride <= 72)
    }

    /// A name that is not UTF-8 and a local header naming another file both live in the rare
    /// box, and setting one keeps the other.
    @Test func rareFieldsKeepEachOther() throws {
        var bytes = Self.zip(name: "a/photo.jpg", central: Self.pkwareLink, local: Self.timestamp)
        // Make the local header's name differ: `a/photo.jpg` -> `a/phXto.jpg`.
        bytes[30 + 4] = UInt8(ascii: "X")
        let entry = try read(bytes)
        #expect(entry.declaredLink != nil)
        #expect(entry.differingLocalName == Array("a/phXto.jpg".utf8))
        #expect(entry.name == "a/photo.jpg")
    }
}
