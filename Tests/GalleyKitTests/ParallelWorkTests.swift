import Foundation
import Testing
@testable import GalleyCore

/// The threads import uses: file hashes off the inflating thread, and the kept zip beside it.
@Suite struct ParallelWorkTests {
    /// Bytes that differ from file to file and chunk to chunk.
    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    @Test func theHashingThreadGivesEachFilesDigestInOrder() {
        // An empty file, one small file, and one of more chunks than the queue holds (the
        // caller waits for the thread then).
        let files = [[UInt8](), Self.bytes(1000, seed: 1), Self.bytes(300_000, seed: 2)]
        let hashing = HashingThread(capacity: 2)
        for file in files {
            hashing.begin()
            var rest = file[...]
            while !rest.isEmpty {
                hashing.update(rest.prefix(4096))
                rest = rest.dropFirst(4096)
            }
            hashing.end()
        }
        let expected = files.map { file -> String in
            let hasher = SHA256Hasher()
            file.withUnsafeBytes { hasher.update($0) }
            return hasher.finalizeHex()
        }
        #expect(hashing.finish().map(\.hex) == expected)
        #expect(hashing.finish().map(\.hex) == expected, "finishing again answers the same")
        #expect(expected[0] == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "SHA-256 of nothing")
    }

    @Test func alongsideWaitsForBothSidesEvenWhenOneFails() {
        struct Refused: Error {}
        let flag = Flag()
        let (body, background) = alongside({ () -> Int in
            Thread.sleep(forTimeInterval: 0.05)
            flag.set()
            return 7
        }) { () -> Int in throw Refused() }
        #expect(flag.isSet, "the background work ended before alongside returned")
        #expect((try? background.get()) == 7)
        #expect(throws: Refused.self) { try body.get() }
    }

    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set() { lock.lock(); value = true; lock.unlock() }
        var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    }
}
