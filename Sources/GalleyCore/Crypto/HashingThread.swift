import Foundation

/// SHA-256 of a series of files on a thread of its own: the caller hands over each file's bytes
/// as it streams them (`begin`, `update`, `end`) and collects the digests, in order, from
/// `finish`. An import inflates and writes on one core while the hashing runs on the other.
/// The hand-over is a `BackgroundConsumer` (which wakes the hashing thread in batches, not at
/// every small file); at most `capacity` messages wait (the caller blocks beyond), so memory
/// stays flat. Call `finish` on every path (it may be called again); released without it, the
/// thread is cancelled.
package final class HashingThread: @unchecked Sendable {
    // @unchecked: `finished` is touched only by the caller's thread.
    private enum Message: Sendable {
        case begin
        case bytes([UInt8])
        case end
    }

    /// The hasher and the digests: touched only by the consumer's thread until `finish` has
    /// joined it.
    private final class State: @unchecked Sendable {
        var hasher = SHA256Hasher()
        var digests: [SHA256Digest] = []
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

    /// `files`: how many files are coming, when known, so the digests' list is made at its
    /// final size (growing it holds the old list and the new one together).
    package init(capacity: Int = 16, files: Int = 0) {
        state.digests.reserveCapacity(files)
        let (state, spares) = (state, Spares(limit: capacity + 1))
        self.spares = spares
        consumer = BackgroundConsumer(capacity: capacity) { message in
            switch message {
            case .begin: state.hasher = SHA256Hasher()
            case .bytes(let bytes):
                bytes.withUnsafeBytes { state.hasher.update($0) }
                spares.give(bytes)
            case .end: state.digests.append(state.hasher.finalize())
            }
        }
    }

    deinit { if !finished { consumer.cancel() } }

    package func begin() { post(.begin) }

    package func update(_ chunk: ArraySlice<UInt8>) {
        var buffer = spares.take()
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
            try? consumer.finish()  // the hashing never throws
        }
        return state.digests
    }

    private func post(_ message: Message) {
        try? consumer.send(message)  // throws only after `finish`: nothing is hashed then
    }
}
