import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyFormats
@testable import GalleySync

/// `DeltaPlan` on real zips: two versions of the fixture issue (`Tests/Fixtures/versions`).
@Suite struct DeltaPlanTests {
    static let old = TestFiles.fixtures.appending(path: "versions/example-valid.zip")
    static let new = TestFiles.fixtures.appending(path: "versions/edited/example-valid.zip")

    static func directory(_ url: URL) throws -> ZipDirectory { try ZipDirectory.read(path: url.path, maxEntries: 1000) }

    /// Copies, fetches and the known end cover the new file once each, in order.
    static func expectPartition(_ plan: DeltaPlan, known: Range<UInt64>) {
        var pieces = plan.copies.map { $0.to..<($0.to + $0.length) } + plan.fetches + [known]
        pieces.sort { $0.lowerBound < $1.lowerBound }
        var reached: UInt64 = 0
        for piece in pieces {
            #expect(piece.lowerBound == reached, "\(pieces)")
            reached = piece.upperBound
        }
        #expect(reached == known.upperBound)
    }

    @Test func unchangedEntriesAreCopiedAndTheRestFetched() throws {
        let held = try Self.directory(Self.old)
        let new = try Self.directory(Self.new)
        let known = new.centralDirectoryOffset..<new.fileSize
        let plan = try DeltaPlan.make(held: held, new: new, known: known, gap: 0, maxRequests: 100)
        #expect(!plan.copies.isEmpty && !plan.fetches.isEmpty, "\(plan)")
        Self.expectPartition(plan, known: known)
        // Each copy is an entry with the same name, CRC-32 and sizes in both.
        for copy in plan.copies {
            let entry = try #require(new.entries.first { $0.localHeaderOffset == copy.to })
            let source = try #require(held.entries.first { $0.localHeaderOffset == copy.from })
            #expect(entry.rawName == source.rawName && entry.crc32 == source.crc32)
        }
    }

    @Test func nearbyFetchesBecomeOneRequestWithinTheBound() throws {
        let held = try Self.directory(Self.old)
        let new = try Self.directory(Self.new)
        let known = new.centralDirectoryOffset..<new.fileSize
        let one = try DeltaPlan.make(held: held, new: new, known: known, gap: 0, maxRequests: 1)
        #expect(one.fetches.count <= 1)
        Self.expectPartition(one, known: known)
        let bridged = try DeltaPlan.make(held: held, new: new, known: known, gap: 1 << 20, maxRequests: 100)
        #expect(bridged.fetches.count <= 1, "copies smaller than the gap between two fetches are fetched with them")
        Self.expectPartition(bridged, known: known)
    }

    /// A directory that places every entry at offset 0 (a lying server's) cannot be planned.
    @Test func overlappingEntriesAreRefused() throws {
        var bytes = [UInt8](try Data(contentsOf: Self.new))
        let end = try #require((0...(bytes.count - 4)).reversed().first { bytes[$0..<($0 + 4)] == [0x50, 0x4B, 0x05, 0x06] })
        var p = Int(bytes[end + 16]) | Int(bytes[end + 17]) << 8 | Int(bytes[end + 18]) << 16 | Int(bytes[end + 19]) << 24
        while p + 46 <= end, bytes[p..<(p + 4)] == [0x50, 0x4B, 0x01, 0x02] {
            for i in 42..<46 { bytes[p + i] = 0 }
            let lengths = [28, 30, 32].map { Int(bytes[p + $0]) | Int(bytes[p + $0 + 1]) << 8 }
            p += 46 + lengths.reduce(0, +)
        }
        let lying = Scratch.path("galley-lying.zip")
        try Data(bytes).write(to: lying)
        let new = try Self.directory(lying)
        #expect(throws: DeltaPlan.Unusable.self) {
            try DeltaPlan.make(held: try Self.directory(Self.old), new: new, known: new.centralDirectoryOffset..<new.fileSize)
        }
    }

    /// The end record's directory offset; none for a file without one.
    @Test func theEndRecordGivesTheDirectory() throws {
        let bytes = [UInt8](try Data(contentsOf: Self.new))
        let new = try Self.directory(Self.new)
        #expect(FeedSyncer.centralDirectoryOffset(bytes, fileSize: UInt64(bytes.count)) == new.centralDirectoryOffset)
        #expect(FeedSyncer.centralDirectoryOffset([UInt8](repeating: 0, count: 100), fileSize: 100) == nil)
    }
}
