import Foundation
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit
@testable import GalleyStore

/// What passed the gate: the small facts kept, the content pass's index handed over once.
struct ImportGateTests {
    init() { ProcessEnvironment.configureForArchives() }

    @Test func theCheckIsHandedOverOnceAndReadAgainAfter() throws {
        let zip = StoreConformanceTests.fixtures.appending(path: "zips/example-valid.zip").path
        let passed = try ImportGate.check(zip)
        #expect(passed.issue.appleID == "example-valid")
        #expect(passed.fileCount > 0 && passed.declaredBytes > 0 && passed.contentDigest.count == 64)
        let first = try passed.takeCheck()
        // A second pass over the same Passed reads the zip's head again: the same check.
        let second = try passed.takeCheck()
        #expect(first.issue.appleID == second.issue.appleID)
        #expect(first.directory.entries.count == second.directory.entries.count)
        #expect(try first.checkContent(sink: nil).filter { $0.severity == .error }.isEmpty)
        #expect(try second.checkContent(sink: nil).filter { $0.severity == .error }.isEmpty)
    }

    /// The content digest is stored with each issue and compared with the next import's, so
    /// its definition never changes: SHA-256 of `name<TAB>crc<TAB>size<LF>` per file, lines in
    /// byte order (the value below is Python's zipfile and hashlib on the same zip).
    @Test func theContentDigestIsTheStoredDefinition() throws {
        let zip = StoreConformanceTests.fixtures.appending(path: "zips/example-valid.zip").path
        #expect(try ImportGate.check(zip).contentDigest == "5f9038d90296a12ffe63a35de8cbb58a171f24139a0810a075528857772f287b")
    }

    /// Where one name begins another, the tab after the shorter one decides the order of the
    /// lines, as sorting the whole lines would: `a<TAB>` before `a-b` (0x09 < 0x2d), and
    /// `a` before `a/` only because the tab is less than `/`.
    @Test func linesAreOrderedAsWholeLinesWouldBe() {
        func entry(_ name: String, crc: UInt32) -> ZipDirectory.Entry {
            ZipDirectory.Entry(name: name, undecodedName: nil, versionMadeBy: 0x314, flags: 0, method: 0, crc32: crc,
                               compressedSize: 1, uncompressedSize: 1, localHeaderOffset: 0, externalAttributes: 0)
        }
        let entries = [entry("x/b", crc: 1), entry("x/a-b", crc: 2), entry("x/a", crc: 3), entry("x/a\u{1}", crc: 4)]
        let lines = entries.map { "\($0.displayName)\t\(String($0.crc32, radix: 16))\t1\n" }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let hasher = SHA256Hasher()
        for line in lines { hasher.update(Array(line.utf8)) }
        #expect(ImportGate.Passed.contentDigest(entries, Array(entries.indices)) == hasher.finalizeHex())
    }

    @Test func aZipThatIsNoZipNeverPasses() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "gate-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fake = folder.appending(path: "issue.zip")
        try Data("not a zip at all".utf8).write(to: fake)
        #expect(throws: (any Error).self) { try ImportGate.check(fake.path) }
    }
}
