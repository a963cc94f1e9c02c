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
    }

    private let condition = NSCondition()
    private var queue: [Message] = []
    private var head = 0
    private let capacity: Int
    private var digests: [String] = []
    private let stopped = DispatchSemaphore(value: 0)
    private var finished = false

    package init(capacity: Int = 8) {
        self.capacity = capacity
        let thread = Thread { [self] in run() }
        thread.start()
    }

    package func begin() { post(.begin) }

    package func update(_ chunk: ArraySlice<UInt8>) { post(.bytes(Array(chunk))) }

    package func end() { post(.end) }

    /// Waits for every file handed over and stops the thread; the digests (lowercase hex) of
    /// the files ended, in order.
    package func finish() -> [String] {
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
        head += 1
        if head > 64 && head * 2 > queue.count {  // drop what was taken, now and then
            queue.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        condition.unlock()
        return message
    }

    private func run() {
        var hasher = SHA256Hasher()
        var results: [String] = []
        loop: while true {
            switch take() {
            case .begin: hasher = SHA256Hasher()
            case .bytes(let bytes): bytes.withUnsafeBytes { hasher.update($0) }
            case .end: results.append(hasher.finalizeHex())
            case .stop: break loop
            }
        }
        condition.lock()
        digests = results
        condition.unlock()
        stopped.signal()
    }
}
