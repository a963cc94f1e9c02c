import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore

/// SHA-256 has two engines (Sources/CSHA256/sha256.c with the x86 SHA extensions, one stream or
/// two at once; swift-crypto elsewhere): both must give FIPS 180-4's digests for the standard
/// vectors, and the same digests as each other for any bytes, however they are cut into
/// updates and however two streams are paired.
@Suite struct SHA256Tests {
    /// FIPS 180-4's examples (via NIST's "SHA-256 examples") and the empty message.
    static let vectors: [(message: [UInt8], digest: String)] = [
        ([], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (Array("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (Array(repeating: UInt8(ascii: "a"), count: 1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
    ]

    static func digest(_ bytes: [UInt8], extensions: Bool) -> String {
        let hasher = SHA256Hasher(extensions: extensions)
        hasher.update(bytes)
        return hasher.finalizeHex()
    }

    @Test(arguments: [true, false])
    func theStandardVectors(extensions: Bool) {
        for (message, digest) in Self.vectors {
            #expect(Self.digest(message, extensions: extensions) == digest, "\(message.count) bytes")
        }
    }

    @Test func thisMachineHashesWithTheExtensionsWhereItHasThem() throws {
        // On x86-64 Linux with SHA-NI (this project's machines), `init()` takes Galley's code; the
        // other tests then cover it. /proc/cpuinfo says what the CPU has, independently.
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let flags = cpu.split(separator: "\n").first { $0.hasPrefix("flags") } ?? ""
        let hasSHA = flags.split(separator: " ").contains("sha_ni")
        #expect(SHA256Hasher.hasExtensions == hasSHA)
    }

    /// Whether an import pairs its two streams on one thread is measured on the CPU
    /// (`pairingPays`; which way it goes is a matter of speed, so no test asserts it); without
    /// the extensions there is nothing to pair.
    @Test func pairingIsChosenOnlyWhereTheExtensionsAre() {
        #expect(!SHA256Hasher.pairingPays || SHA256Hasher.hasExtensions)
        if !SHA256Hasher.hasExtensions { #expect(!SHA256Hasher.measurePairing()) }
    }

    /// Random bytes cut into random updates, both engines, and pairs of streams of random
    /// lengths updated together in random pieces (so the pair's blocks start at every offset of
    /// either's partial block): every digest equals swift-crypto's of the whole.
    @Test func anyCutAndAnyPairingGivesTheSameDigests() {
        var random = SeededGenerator(state: 20261128)
        let sizes = [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096, 65_537, 300_001]
        for round in 0..<120 {
            let lengthA = round < sizes.count ? sizes[round] : Int(random.next() % 200_000)
            let lengthB = Int(random.next() % 3 == 0 ? random.next() % 100 : random.next() % 200_000)
            let a = (0..<lengthA).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let b = (0..<lengthB).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let (first, second) = (SHA256Hasher(), SHA256Hasher())
            var (restA, restB) = (a[...], b[...])
            while !restA.isEmpty || !restB.isEmpty {
                let pieceA = restA.prefix(Self.piece(&random)), pieceB = restB.prefix(Self.piece(&random))
                restA = restA.dropFirst(pieceA.count)
                restB = restB.dropFirst(pieceB.count)
                if random.next() % 5 == 0 {
                    pieceA.withUnsafeBytes { first.update($0) }  // one alone now and then
                    pieceB.withUnsafeBytes { second.update($0) }
                } else {
                    pieceA.withUnsafeBytes { x in pieceB.withUnsafeBytes { y in SHA256Hasher.update(first, x, second, y) } }
                }
            }
            #expect(first.finalizeHex() == Self.digest(a, extensions: false), "round \(round): \(lengthA) bytes")
            #expect(second.finalizeHex() == Self.digest(b, extensions: false), "round \(round): \(lengthB) bytes")
            #expect(Self.digest(a, extensions: true) == Self.digest(a, extensions: false), "round \(round), one update")
        }
    }

    /// A piece's length: small, around a block, or large.
    static func piece(_ random: inout SeededGenerator) -> Int {
        switch random.next() % 4 {
        case 0: Int(random.next() % 70)
        case 1: 64 * Int(random.next() % 4) + Int(random.next() % 3)
        default: Int(random.next() % 70_000)
        }
    }

    /// Two hashers paired with swift-crypto on one side take the plain way and still agree.
    @Test func aPairWithOnePortableHasherGivesTheSameDigests() {
        let a = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }, b = (0..<9_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let (first, second) = (SHA256Hasher(extensions: false), SHA256Hasher())
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in SHA256Hasher.update(first, x, second, y) } }
        #expect(first.finalizeHex() == Self.digest(a, extensions: true))
        #expect(second.finalizeHex() == Self.digest(b, extensions: false))
    }
}
