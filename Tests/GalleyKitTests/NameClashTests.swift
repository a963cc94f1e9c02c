import Foundation
import Testing
@testable import GalleyFormats
@testable import GalleyKit

/// `ContainerChecks.nameClashes`: duplicate names and names that fold alike (case,
/// Unicode normalisation), found by sorting instead of sets of every name.
@Suite struct NameClashTests {
    static func entry(_ name: String) -> ZipDirectory.Entry {
        ZipDirectory.Entry(name: name, undecodedName: nil, versionMadeBy: 0x0314, flags: 0x0800, method: 0, crc32: 0,
                           compressedSize: 1, uncompressedSize: 1, localHeaderOffset: 0, externalAttributes: 0)
    }

    static func undecoded(_ bytes: [UInt8]) -> ZipDirectory.Entry {
        ZipDirectory.Entry(name: nil, undecodedName: bytes, versionMadeBy: 0x0314, flags: 0, method: 0, crc32: 0,
                           compressedSize: 1, uncompressedSize: 1, localHeaderOffset: 0, externalAttributes: 0)
    }

    /// What the check found before it sorted: a set of the names seen and a dictionary of the
    /// folded ones, in zip order.
    static func bySets(_ entries: [ZipDirectory.Entry]) -> [Int: ContainerChecks.NameClash] {
        var seenExact = Set<[UInt8]>()
        var seenFolded: [String: String] = [:]
        var clashes: [Int: ContainerChecks.NameClash] = [:]
        for (number, entry) in entries.enumerated() {
            let raw = entry.rawName
            let folded = ContainerChecks.folded(entry.displayName, raw: raw)
            if seenExact.contains(raw) {
                clashes[number] = .duplicate
            } else if let other = seenFolded[folded] {
                clashes[number] = .collision(other)
            }
            seenExact.insert(raw)
            seenFolded[folded] = seenFolded[folded] ?? entry.displayName
        }
        return clashes
    }

    @Test func duplicatesAndEachKindOfCollisionAreFoundInZipOrder() {
        let names = [
            "i/A.jpg", "i/b.jpg", "i/a.jpg", "i/A.jpg",  // 2 collides with 0, 3 repeats 0
            "i/caf\u{E9}.jpg", "i/cafe\u{301}.jpg",       // composed and decomposed: 5 collides with 4
            "i/B.JPG",                                     // 6 collides with 1
            "i/\u{3A9}", "i/\u{3C9}",                      // Greek capital and small omega: 8 with 7
            "i/k.jpg", "i/\u{212A}.jpg",                   // the Kelvin sign folds to plain k: 10 with 9
            "i/a.jpg",                                     // repeats 2 (not 0: other bytes)
            "i/ab", "i/a", "i/a/b",                        // one name the start of another: no clash
        ]
        let clashes = ContainerChecks.nameClashes(names.map(Self.entry))
        #expect(clashes == [
            2: .collision("i/A.jpg"), 3: .duplicate, 5: .collision("i/caf\u{E9}.jpg"), 6: .collision("i/b.jpg"),
            8: .collision("i/\u{3A9}"), 10: .collision("i/k.jpg"), 11: .duplicate,
        ])
        #expect(clashes == Self.bySets(names.map(Self.entry)))
    }

    @Test func namesThatAreNotUTF8CompareByTheirBytes() {
        let entries = [Self.undecoded([0x69, 0x2F, 0xFF]), Self.undecoded([0x69, 0x2F, 0xFE]), Self.undecoded([0x69, 0x2F, 0xFF])]
        let clashes = ContainerChecks.nameClashes(entries)
        #expect(clashes[2] == .duplicate)
        #expect(clashes == Self.bySets(entries), "two invalid names shown alike collide, as before")
    }

    @Test func aLargeMixOfNamesGivesWhatTheSetsGave() {
        var generator = SystemRandomNumberGenerator()
        let parts = ["a", "A", "b", "\u{E9}", "e\u{301}", "\u{C9}", "\u{212A}", "k", "K", "/", "x", "_"]
        let names = (0..<3000).map { _ in "i/" + (0..<Int.random(in: 1...4, using: &generator)).map { _ in parts.randomElement(using: &generator)! }.joined() }
        let entries = names.map(Self.entry)
        #expect(ContainerChecks.nameClashes(entries) == Self.bySets(entries))
    }

    @Test func manySpellingsOfOneNameAreEachADuplicateOrACollision() {
        // Thousands of entries that fold to one name (a hostile zip's shape): each is judged
        // against the set of that name's spellings seen, not against every earlier entry.
        let spellings = ["i/photo.jpg", "i/PHOTO.jpg", "i/Photo.JPG", "i/photo.jpg"]
        let entries = (0..<8000).map { Self.entry(spellings[$0 % spellings.count]) }
        let clashes = ContainerChecks.nameClashes(entries)
        #expect(clashes.count == 7999)
        #expect(clashes[1] == .collision("i/photo.jpg") && clashes[3] == .duplicate && clashes[4] == .duplicate)
        #expect(clashes == Self.bySets(entries))
    }

    @Test func noNamesNoClashes() {
        #expect(ContainerChecks.nameClashes([]).isEmpty)
    }
}
