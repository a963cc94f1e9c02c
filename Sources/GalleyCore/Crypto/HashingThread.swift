import Foundation

/// SHA-256 of a series of files on a thread of its own: the caller hands over each file's bytes
/// as it streams them (`begin`, `update`, `end`) and collects the digests, in order, from
/// `finish`. An import inflates and writes on one core while the hashing runs on the other.
/// At most `capacity` chunks wait (the caller blocks beyond), so memory stays flat. The thread
/// holds the object until `finish`: call it on every path (it may be called again).
package final class HashingThread: @unchecked Sendable {
    private enum Message {
        case begin
        case bytes([UInt8])
        case end
        case stop
        /// A slot already taken (so the queue holds no second reference to a buffer being reused).
        case taken
    }

    private let condition = NSCondition()
    private var queue: [Message] = []
    private var head = 0
    private let capacity: Int
    private var digests: [SHA256Digest] = []
    /// Buffers the thread has hashed, for `update` to fill again: no allocation per chunk.
    private var spare: [[UInt8]] = []
    private let stopped = DispatchSemaphore(value: 0)
    private let expectedFiles: Int
    private var finished = false

    /// `files`: how many files are coming, when known, so the digests' list is made at its
    /// final size (growing it holds the old list and the new one together).
    package init(capacity: Int = 8, files: Int = 0) {
        self.capacity = capacity
        expectedFiles = files
        let thread = Thread { [self] in run() }
        thread.start()
    }

    package func begin() { post(.begin) }

    package func update(_ chunk: ArraySlice<UInt8>) {
        condition.lock()
        var buffer = spare.popLast() ?? []
        condition.unlock()
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: chunk)
        post(.bytes(buffer))
    }

    package func end() { post(.end) }

    /// Waits for every file handed over and stops the thread; the digests of the files ended,
    /// in order.
    package func finish() -> [SHA256Digest] {
        if !finished {
            finished = true
            post(.stop)
            stopped.wait()
        }
        return digests
    }

    private func post(_ message: Message) {
        condition.lock()
        while queue.count - head >= capacity { condition.wait() }
        queue.append(message)
        condition.broadcast()
        condition.unlock()
    }

    private func take() -> Message {
        condition.lock()
        while head == queue.count { condition.wait() }
        let message = queue[head]
        queue[head] = .taken
        head += 1
        if head > 64 && head * 2 > queue.count {  // drop what was taken, now and then
            queue.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        condition.unlock()
        return message
    }

    private func recycle(_ buffer: [UInt8]) {
        condition.lock()
        if spare.count < capacity + 1 { spare.append(buffer) }
        condition.unlock()
    }

    private func run() {
        var hasher = SHA256Hasher()
        var results: [SHA256Digest] = []
        results.reserveCapacity(expectedFiles)
        loop: while true {
            switch take() {
            case .begin: hasher = SHA256Hasher()
            case .bytes(let bytes):
                bytes.withUnsafeBytes { hasher.update($0) }
                recycle(bytes)
            case .end: results.append(hasher.finalize())
            case .stop: break loop
            case .taken: continue
            }
        }
        condition.lock()
        digests = results
        condition.unlock()
        stopped.signal()
    }
}
