import Foundation
import Testing
@testable import GalleyCore

/// The threads import uses: file hashes off the inflating thread, the kept zip beside it, and
/// latest.json parsed into rows while the database writes them.
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

    @Test func aPipelineHandsEveryItemOnInOrderNeverMoreThanItsCapacityAhead() throws {
        let produced = Counter()
        var received: [Int] = []
        var mostAhead = 0
        try pipeline(capacity: 3, produce: { send in
            for item in 0..<500 {
                produced.increment()
                try send(item)
            }
        }, consume: { item in
            received.append(item)
            // Sent but not yet taken, besides this one: the queue's content.
            mostAhead = max(mostAhead, produced.value - received.count)
            if item % 50 == 0 { Thread.sleep(forTimeInterval: 0.002) }  // a slow consumer now and then
        })
        #expect(received == Array(0..<500))
        // At most `capacity` queued, plus the one the producer made and waits to send.
        #expect(mostAhead <= 4, "the producer ran \(mostAhead) items ahead")
    }

    @Test func aConsumerErrorStopsTheProducerAndIsRethrown() {
        struct Refused: Error {}
        let outcome = Outcome()
        #expect(throws: Refused.self) {
            try pipeline(capacity: 2, produce: { send in
                do {
                    for item in 0..<1_000_000 { try send(item) }
                    outcome.set("ran to the end")
                } catch is PipelineStopped {
                    outcome.set("stopped")
                    throw PipelineStopped()
                }
            }, consume: { item in
                if item == 10 { throw Refused() }
            })
        }
        // pipeline returns only once the producer's thread has ended.
        #expect(outcome.value == "stopped")
    }

    @Test func aProducerErrorComesAfterTheItemsItSentBefore() {
        struct Broken: Error {}
        var received: [Int] = []
        #expect(throws: Broken.self) {
            try pipeline(capacity: 4, produce: { send in
                for item in 0..<20 { try send(item) }
                throw Broken()
            }, consume: { received.append($0) })
        }
        #expect(received == Array(0..<20))
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func increment() { lock.lock(); count += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    }

    final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var text: String?
        func set(_ value: String) { lock.lock(); text = value; lock.unlock() }
        var value: String? { lock.lock(); defer { lock.unlock() }; return text }
    }

    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set() { lock.lock(); value = true; lock.unlock() }
        var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    }
}
