import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore

/// `FileDigest.of(_:copyingTo:)` keeps an import's zip: the kernel copies it, then the copy is
/// hashed through 2 MiB mappings of its pages. The digest must be the file's SHA-256 whatever
/// its size falls on: empty, one window, exactly two, and two and a bit; checked against
/// coreutils' `sha256sum` and the plain reading path.
@Suite struct FileDigestTests {
    /// `sha256sum`'s digest of `path`: a reference outside Galley and its crypto library.
    static func coreutilsDigest(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }

    @Test(arguments: [0, 1_000, 2 << 20, (4 << 20) + 123])
    func aCopysDigestIsTheFilesSHA256(size: Int) throws {
        let folder = try Scratch.folder("galley-filedigest")
        let original = folder.appending(path: "original.zip")
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 11) }
        try Data(bytes).write(to: original)
        let copy = folder.appending(path: "copy.zip")

        let digest = try FileDigest.of(original.path, copyingTo: copy.path)

        #expect(digest.size == Int64(size))
        #expect(digest.sha256 == (try Self.coreutilsDigest(original.path)))
        #expect(digest == (try FileDigest.of(original.path)))
        #expect(try Data(contentsOf: copy) == Data(bytes))
    }

    @Test func aCopyNeverReplacesAFile() throws {
        let folder = try Scratch.folder("galley-filedigest")
        let original = folder.appending(path: "original.zip")
        try Data("zip".utf8).write(to: original)
        let copy = folder.appending(path: "copy.zip")
        try Data("kept".utf8).write(to: copy)
        #expect(throws: FileDigestError.self) { try FileDigest.of(original.path, copyingTo: copy.path) }
        #expect(try Data(contentsOf: copy) == Data("kept".utf8))
    }
}
