import Foundation
import Testing
import GalleyTestSupport
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit
@testable import GalleyStore
@testable import GalleyStorePostgres
@testable import GalleyStoreSQLite

/// What passed the gate: the small facts kept, the content pass's index handed over once.
struct ImportGateTests {
    init() { ProcessEnvironment.configureForArchives() }

    /// An import job's steps each take what the one before read, once: a second take is a
    /// caller's mistake, said in words, never a silent second read of the zip.
    @Test func theCheckIsHandedOverOnceAndNeverReadAgain() throws {
        let zip = StoreConformanceTests.fixtures.appending(path: "zips/example-valid.zip").path
        let job = try ImportJob.open(zip)
        let passed = try job.checkHead()
        #expect(passed.issue.appleID == "example-valid")
        #expect(passed.fileCount > 0 && passed.declaredBytes > 0 && passed.contentDigest.count == 64)
        let check = try passed.takeCheck()
        #expect(try check.checkContent(sink: nil).filter { $0.severity == .error }.isEmpty)
        for again in [{ _ = try passed.takeCheck() }, { _ = try job.checkHead() }] as [() throws -> Void] {
            let error = try #require(throws: GalleyError.self) { try again() }
            #expect(error.id == .usage && error.message.contains("has already run"), "\(error.message)")
        }
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
        #expect(Self.directory(entries).fileLinesDigest(Array(entries.indices)) == hasher.finalizeHex())
    }

    static func directory(_ entries: [ZipDirectory.Entry]) -> ZipDirectory {
        ZipDirectory(fileSize: 0, entries: entries, centralDirectoryOffset: 0, centralDirectorySize: 0, hasZip64Records: false, leadingBytes: 0)
    }

    /// The digest as it was first written (each name's `String`, compared by `Character`-free
    /// UTF-8 iteration, each line made and hashed on its own), the definition every stored
    /// digest was made by: the byte-level one must agree with it on every name, the edges
    /// included (a name that begins another, a tab or a byte below it after the common part,
    /// names that are not UTF-8, the same name twice).
    static func firstDigest(_ entries: [ZipDirectory.Entry], _ files: [Int]) -> String {
        let names = files.map { entries[$0].displayName }
        let tab = UInt8(ascii: "\t")
        let order = files.indices.sorted { a, b in
            var (x, y) = (names[a].utf8.makeIterator(), names[b].utf8.makeIterator())
            while true {
                switch (x.next(), y.next()) {
                case let (p?, q?) where p != q: return p < q
                case (_?, _?): continue
                case (nil, let q?): return tab < q
                case (let p?, nil): return p < tab
                case (nil, nil): return false
                }
            }
        }
        let hasher = SHA256Hasher()
        for position in order {
            let entry = entries[files[position]]
            hasher.update(Array("\(names[position])\t\(String(entry.crc32, radix: 16))\t\(entry.uncompressedSize)\n".utf8))
        }
        return hasher.finalizeHex()
    }

    @Test func theByteDigestAndCountAgreeWithTheirFirstDefinitions() {
        var random = SeededGenerator(state: 1128)
        let pieces: [[UInt8]] = [Array("a".utf8), Array("b".utf8), Array("/".utf8), Array("\t".utf8), [0x01], [0x7E],
                                 Array("é".utf8), [0xFF], [0xC3], Array("-".utf8), Array("media".utf8)]
        for round in 0..<300 {
            var entries: [ZipDirectory.Entry] = []
            for _ in 0...random.below(40) {
                var raw: [UInt8] = []
                for _ in 0..<random.below(7) { raw += pieces[random.below(pieces.count)] }
                let name = String(validating: raw, as: UTF8.self)
                entries.append(ZipDirectory.Entry(
                    name: name, undecodedName: name == nil ? raw : nil, versionMadeBy: 0x314, flags: 0, method: 0,
                    crc32: UInt32(truncatingIfNeeded: random.next()), compressedSize: 1,
                    uncompressedSize: random.next() >> 24, localHeaderOffset: 0, externalAttributes: 0))
            }
            // Sometimes the same name twice (the container checks refuse it; the digest is still defined).
            if round % 7 == 0, let first = entries.first { entries.append(first) }
            var files = Array(entries.indices)
            for index in files.indices.reversed() { files.swapAt(index, random.below(index + 1)) }
            let directory = Self.directory(entries)
            #expect(directory.fileLinesDigest(files) == Self.firstDigest(entries, files), "round \(round): \(entries.map(\.displayName))")
            #expect(directory.filesInAFolder(files) == files.count { entries[$0].displayName.split(separator: "/", maxSplits: 1).count == 2 },
                    "round \(round): \(entries.map(\.displayName))")
        }
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
