import Foundation
import Testing
@testable import GalleyCore

/// The threads import uses: file hashes off the inflating thread, the kept zip beside it, and
/// latest.json parsed into rows while the database writes them; and pack's: latest.json
/// deflated on a thread of its own while the articles are built.
@Suite struct ParallelWorkTests {
    /// Bytes that differ from file to file and chunk to chunk.
    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    /// Hands `files` to `hashing` as an import's pass does: each begun, its bytes in chunks of
    /// at most `chunk`, ended.
    static func handOver(_ files: [[UInt8]], to hashing: HashingThread, chunk: Int) {
        for file in files {
            hashing.begin()
            var rest = file[...]
            while !rest.isEmpty {
                hashing.update(rest.prefix(chunk))
                rest = rest.dropFirst(chunk)
            }
            hashing.end()
        }
    }

    @Test func theHashingThreadGivesEachFilesDigestInOrder() {
        // An empty file, one small file, and one of more chunks than the queue holds (the
        // caller waits for the thread then).
        let files = [[UInt8](), Self.bytes(1000, seed: 1), Self.bytes(300_000, seed: 2)]
        let digests = Digests()
        let hashing = HashingThread(capacity: 2, deliver: digests.add)
        Self.handOver(files, to: hashing, chunk: 4096)
        let expected = files.map { file -> String in
            let hasher = SHA256Hasher()
            file.withUnsafeBytes { hasher.update($0) }
            return hasher.finalizeHex()
        }
        hashing.finish()
        #expect(digests.hex == expected)
        hashing.finish()
        #expect(digests.hex == expected, "finishing again delivers nothing more")
        #expect(expected[0] == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "SHA-256 of nothing")
    }

    /// Each chunk waits for the next call to know whether it ends its file: files of one
    /// chunk, of several, empty ones and chunks that are empty, in a random order, each give
    /// their own digest, in order, whatever the queue's size.
    @Test(arguments: [1, 2, 16])
    func aMixOfFilesHandedOverChunkByChunkGivesEachDigest(capacity: Int) {
        var generator = SystemRandomNumberGenerator()
        var files: [[[UInt8]]] = []  // each file as the chunks it is handed over in
        for index in 0..<300 {
            let chunks = [0, 1, 1, 1, 2, 5].randomElement(using: &generator) ?? 1
            files.append((0..<chunks).map { chunk in
                let size = [0, 1, 63, 64, 65, 10_000, 70_000].randomElement(using: &generator) ?? 1
                return Self.bytes(size, seed: UInt8(truncatingIfNeeded: index &+ chunk))
            })
        }
        let digests = Digests()
        let hashing = HashingThread(capacity: capacity, deliver: digests.add)
        for file in files {
            hashing.begin()
            for chunk in file { hashing.update(chunk[...]) }
            hashing.end()
        }
        let expected = files.map { file -> String in
            let hasher = SHA256Hasher()
            for chunk in file { chunk.withUnsafeBytes { hasher.update($0) } }
            return hasher.finalizeHex()
        }
        hashing.finish()
        #expect(digests.hex == expected)
    }

    /// A second stream on the copy lane (an import's kept zip), handed over from another thread
    /// in chunks the sender keeps until hashed, while files come on the file lane: every file's
    /// digest and the stream's are their own, whether the files end before the stream or after,
    /// whatever the queue's size, and whether the thread pairs the two or hashes the files
    /// first and the copy in slices between them.
    @Test(arguments: [(1, true, true), (16, true, true), (16, false, true), (1, true, false), (16, true, false), (16, false, false)])
    func aCopyLaneBesideTheFilesGivesEveryDigest(capacity: Int, filesEndFirst: Bool, pairs: Bool) throws {
        var generator = SystemRandomNumberGenerator()
        let files: [[UInt8]] = (0..<200).map { index in
            Self.bytes([0, 1, 100, 10_000, 70_000, 300_000].randomElement(using: &generator) ?? 1, seed: UInt8(truncatingIfNeeded: index))
        }
        let stream = Self.bytes(5_000_000 + Int.random(in: 0..<1000, using: &generator), seed: 99)
        let digests = Digests()
        let hashing = HashingThread(capacity: capacity, pairs: pairs, deliver: digests.add)
        let lane = try #require(hashing.openCopyLane())
        #expect(hashing.openCopyLane() == nil, "one copy lane at a time")
        let copied = Box<SHA256Digest?>(nil)
        let done = DispatchSemaphore(value: 0)
        let copying = Thread {
            defer { done.signal() }
            stream.withUnsafeBytes { bytes in
                var tickets: [CopyLane.Ticket] = []
                var offset = 0
                while offset < bytes.count {
                    let count = min(bytes.count - offset, [1, 4096, 1 << 20, 333_333].randomElement() ?? 1)
                    tickets.append(lane.hash(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])))
                    offset += count
                    if tickets.count > 2 { tickets.removeFirst().wait() }
                }
                copied.value = lane.digest()
            }
        }
        if filesEndFirst { copying.start() }
        Self.handOver(files, to: hashing, chunk: 65_536)
        hashing.endFiles()
        if !filesEndFirst { copying.start() }
        hashing.finish()  // waits for the lane to close too
        done.wait()
        let expected = files.map { SHA256Tests.digest($0, extensions: false) }
        #expect(digests.hex == expected)
        #expect(copied.value?.hex == SHA256Tests.digest(stream, extensions: false))
    }

    /// A hashing thread released without `finish` (a pass that failed) while a copy lane still
    /// has chunks: whoever waits on them is woken, and the lane gives no digest.
    @Test func aCancelledHashingThreadLeavesNoCopyWaiting() throws {
        var hashing: HashingThread? = HashingThread(deliver: { _ in })
        let lane = try #require(hashing?.openCopyLane())
        let bytes = Self.bytes(1 << 20, seed: 5)
        hashing?.begin()
        hashing?.update(bytes[...])  // held back: never ended
        hashing = nil
        _ = bytes.withUnsafeBytes { lane.hash($0).wait() }
        #expect(lane.digest() == nil)
    }

    final class Box<Value>: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// What a hashing thread delivered, in order.
    final class Digests: @unchecked Sendable {
        // `list` is read and changed under `lock` only.
        private let lock = NSLock()
        private var list: [SHA256Digest] = []
        @Sendable func add(_ digest: SHA256Digest) { lock.withLock { list.append(digest) } }
        var hex: [String] { lock.withLock { list.map(\.hex) } }
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

    /// The consumer sleeps until a batch of items waits, but never on fewer for long: a producer
    /// that waits for each item to be consumed before sending the next is not kept waiting.
    @Test func aProducerWaitingOnItsConsumerIsNotKeptWaitingForABatch() throws {
        let consumed = DispatchSemaphore(value: 0)
        let stalls = Counter()
        var received: [Int] = []
        try pipeline(capacity: 32, produce: { send in
            for item in 0..<20 {
                try send(item)
                if consumed.wait(timeout: .now() + 2) == .timedOut { stalls.increment() }
            }
        }, consume: { item in
            received.append(item)
            consumed.signal()
        })
        #expect(received == Array(0..<20))
        #expect(stalls.value == 0, "the consumer waited for a batch that was never coming")
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

    @Test func aBackgroundConsumerTakesEveryItemInOrderNeverMoreThanItsCapacityBehind() throws {
        let taken = Collected()
        let consumer = BackgroundConsumer<Int>(capacity: 3) { item in
            taken.append(item)
            if item % 50 == 0 { Thread.sleep(forTimeInterval: 0.002) }  // a slow consumer now and then
        }
        var mostAhead = 0
        for item in 0..<500 {
            try consumer.send(item)
            // Sent but not yet taken: at most the queue, plus the item being consumed.
            mostAhead = max(mostAhead, item + 1 - taken.count)
        }
        try consumer.finish()
        #expect(taken.items == Array(0..<500), "finish returns once every item was consumed")
        #expect(mostAhead <= 4, "the sender ran \(mostAhead) items ahead")
        consumer.cancel()  // after finish: nothing happens
        #expect(taken.items.count == 500)
        #expect(throws: PipelineStopped.self) { try consumer.send(500) }
    }

    @Test func aBackgroundConsumersErrorReachesTheSenderAndFinish() {
        struct Refused: Error {}
        let consumer = BackgroundConsumer<Int>(capacity: 2) { item in
            if item == 10 { throw Refused() }
        }
        var sent = 0
        #expect(throws: Refused.self) {
            for item in 0..<1_000_000 {
                try consumer.send(item)
                sent += 1
            }
        }
        #expect(sent < 1_000_000, "the sender stopped at the consumer's error, after \(sent) items")
        #expect(throws: Refused.self) { try consumer.finish() }
    }

    @Test func cancellingABackgroundConsumerDropsWhatIsQueuedAndWaitsForItsThread() throws {
        let taken = Collected()
        let (started, gate) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let consumer = BackgroundConsumer<Int>(capacity: 8) { item in
            if item == 0 {  // holds the consumer on its first item
                started.signal()
                gate.wait()
            }
            taken.append(item)
        }
        try consumer.send(0)
        started.wait()
        for item in 1..<9 { try consumer.send(item) }  // item 0 taken, 1...8 queued
        // The consumer is let go well after cancel has dropped the queue; cancel waits for it.
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { gate.signal() }
        consumer.cancel()
        #expect(taken.items == [0], "the queued items were dropped, and the one being consumed finished first")
        #expect(throws: CancellationError.self) { try consumer.finish() }
    }

    final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [Int] = []
        func append(_ item: Int) { lock.lock(); list.append(item); lock.unlock() }
        var items: [Int] { lock.lock(); defer { lock.unlock() }; return list }
        var count: Int { items.count }
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

    @Test func aBackgroundMapRunsWhileTheCallerWorksAndKeepsTheOrder() {
        // The first item waits for the caller to have gone on past the map: a map that ran its
        // items on the calling thread before returning would time out there instead.
        final class Flag: @unchecked Sendable {
            private let lock = NSLock()
            private var raised = false
            func raise() { lock.withLock { raised = true } }
            var isRaised: Bool { lock.withLock { raised } }
        }
        let callerWorking = DispatchSemaphore(value: 0)
        let sawTheCaller = Flag()
        let items = Array(0..<20)
        let map = BackgroundMap(items) { item -> Int in
            if item == 0 && callerWorking.wait(timeout: .now() + 5) == .success { sawTheCaller.raise() }
            return item * item
        }
        callerWorking.signal()  // the caller's own work begins after the map did
        #expect(map.results() == items.map { $0 * $0 })
        #expect(sawTheCaller.isRaised, "the items ran while the caller went on")
        #expect(map.results() == items.map { $0 * $0 }, "asked again, the same")
        #expect(BackgroundMap([Int]()) { $0 }.results().isEmpty)
    }

    /// A render's copy into its site: every item is tried until a failure, and the answer is
    /// the first failure in the items' order, whichever thread met it first; items of a run
    /// after its failure are not tried.
    @Test(arguments: [1, 3, 256])
    func theFirstFailureIsTheFirstInTheItemsOrder(run: Int) {
        let items = Array(0..<1_000)
        let tried = Counter()
        #expect(parallelFirstFailure(items, run: run) { item -> String? in tried.increment(); return nil } == nil)
        #expect(tried.value == items.count, "with no failure every item is tried")
        let failing: Set<Int> = [997, 411, 412, 730]
        for _ in 0..<20 {
            let answer = parallelFirstFailure(items, run: run) { failing.contains($0) ? "item \($0)" : nil }
            #expect(answer == "item 411")
        }
        let stopped = Counter()
        _ = parallelFirstFailure(Array(0..<10), run: 10) { item -> Int? in stopped.increment(); return item == 2 ? item : nil }
        #expect(stopped.value == 3, "a run stops at its failure")
        #expect(parallelFirstFailure([Int](), run: run) { $0 } == nil)
        #expect(parallelFirstFailure([5], run: 0) { $0 } == 5, "a run of at least one")
    }
}
