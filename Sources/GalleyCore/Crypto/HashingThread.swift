import Foundation

/// SHA-256 of a series of files on a thread of its own: the caller hands over each file's bytes
/// as it streams them (`begin`, `update`, `end`), and each file's digest is delivered, in order,
/// on the hashing thread as the file ends (an import's ledger takes them, and its rows' writer
/// takes each file from there as soon as it is hashed). An import inflates and writes on one core while the hashing runs on the other.
/// The hand-over is a `BackgroundConsumer` (which wakes the hashing thread in batches, not at
/// every small file); at most `capacity` messages wait (the caller blocks beyond), so memory
/// stays flat. Each chunk is held back until the next call says whether it was the file's last,
/// so that a file of one chunk (nearly every file of a 30,000-article issue) is one message,
/// not three: a batch is then four files, and the inflating thread wakes the hashing thread a
/// third as often (each wake-up a futex call and a cross-core interrupt: 0.35 CPU-s of that
/// thread in such an import, as much as hashing its images). Call `finish` on every path (it
/// may be called again); released without it, the thread is cancelled.
package final class HashingThread: @unchecked Sendable {
    // @unchecked: `finished`, `held` and `starting` are touched only by the caller's thread.
    /// A chunk of a file: `first` starts a new digest, `last` ends it (a file without bytes is
    /// one empty chunk, both).
    private struct Message: Sendable {
        var bytes: [UInt8]
        var first: Bool
        var last: Bool
    }

    /// The hasher: touched only by the consumer's thread.
    private final class State: @unchecked Sendable {
        var hasher = SHA256Hasher()
    }

    /// Buffers the thread has hashed, for `update` to fill again: no allocation per chunk.
    private final class Spares: @unchecked Sendable {
        // Guards `buffers`.
        private let lock = NSLock()
        private var buffers: [[UInt8]] = []
        private let limit: Int

        init(limit: Int) { self.limit = limit }

        func take() -> [UInt8] {
            lock.lock()
            defer { lock.unlock() }
            return buffers.popLast() ?? []
        }

        func give(_ buffer: [UInt8]) {
            lock.lock()
            if buffers.count < limit { buffers.append(buffer) }
            lock.unlock()
        }
    }

    private let consumer: BackgroundConsumer<Message>
    private let state = State()
    private let spares: Spares
    private var finished = false
    /// The chunk handed over last, not yet posted: `end` marks it the file's last.
    private var held: Message?
    /// `begin` was called and no chunk has come since.
    private var starting = false

    /// `deliver` is handed each file's digest on the hashing thread as the file ends, in order.
    package init(capacity: Int = 16, deliver: @escaping @Sendable (SHA256Digest) -> Void) {
        // Buffers in use at most: `capacity` queued, one held back, one being hashed.
        let (state, spares) = (state, Spares(limit: capacity + 2))
        self.spares = spares
        consumer = BackgroundConsumer(capacity: capacity) { message in
            if message.first { state.hasher = SHA256Hasher() }
            message.bytes.withUnsafeBytes { state.hasher.update($0) }
            spares.give(message.bytes)
            if message.last { deliver(state.hasher.finalize()) }
        }
    }

    deinit { if !finished { consumer.cancel() } }

    package func begin() {
        starting = true
    }

    package func update(_ chunk: ArraySlice<UInt8>) {
        if let held { post(held) }
        var buffer = spares.take()
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: chunk)
        held = Message(bytes: buffer, first: starting, last: false)
        starting = false
    }

    package func end() {
        var last = held ?? Message(bytes: [], first: true, last: false)
        last.last = true
        post(last)
        held = nil
        starting = false
    }

    /// Waits until every file handed over was hashed and delivered, and stops the thread.
    package func finish() {
        guard !finished else { return }
        finished = true
        try? consumer.finish()  // the hashing never throws
    }

    private func post(_ message: Message) {
        try? consumer.send(message)  // throws only after `finish`: nothing is hashed then
    }
}
