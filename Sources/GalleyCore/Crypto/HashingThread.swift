import Foundation

/// SHA-256 of a series of files on a thread of its own: the caller hands over each file's bytes
/// as it streams them (`begin`, `update`, `end`), and each file's digest is delivered, in order,
/// on the hashing thread as the file ends (an import's ledger takes them, and its rows' writer
/// takes each file from there as soon as it is hashed). An import inflates and writes on one
/// core while the hashing runs on the other.
///
/// A second stream can share the thread (`openCopyLane`: an import's kept zip, copied beside
/// the pass): whenever both lanes have bytes waiting, the thread hashes the two together
/// (`SHA256Hasher.update(_:_:_:_:)`, two streams on one core at twice the speed of one). While
/// the copy has bytes and no file chunk waits, the thread waits for one until the files have
/// ended (`endFiles`): the copy reads faster than the pass inflates, and hashed alone whenever no
/// file chunk was there it ran ahead, so half of the hashing went one stream at a time. What is
/// left of the copy then is hashed alone.
///
/// Where the CPU gains little by pairing (`SHA256Hasher.pairingPays`; `pairs: false`), the
/// thread hashes the files first and the copy in the gaps, a slice at a time, without waiting:
/// the inflating thread keeps a core to itself. With the copy on a thread of its own, three busy
/// threads shared two cores and the scheduler kept the inflating thread beside the hashing
/// thread it wakes, at half speed. A light pass leaves no gaps, though, so an import opens the
/// copy lane only for a zip whose files hold 1 GiB or more (`ImportPass.CopyHashing`); a smaller
/// zip's copy is hashed on its own thread. `bench/import_bench.py` measures both.
///
/// Each lane is a queue guarded by one condition. The file lane wakes the thread in batches,
/// not at every small file: a thread that finds nothing to do sleeps until a quarter of the
/// queue waits (or a millisecond passes with something queued); at most `capacity` chunks wait
/// (the caller blocks beyond), so memory stays flat. Each chunk is held back until the next
/// call says whether it was the file's last, so that a file of one chunk (nearly every file of
/// a 30,000-article issue) is one message, not three: the inflating thread wakes the hashing
/// thread a third as often (each wake-up a futex call and a cross-core interrupt: 0.35 CPU-s of
/// that thread in such an import, as much as hashing its images). Call `finish` on every path
/// (it may be called again); released without it, the thread is cancelled.
package final class HashingThread: @unchecked Sendable {
    // @unchecked: `finished`, `held` and `starting` are touched only by the caller's thread;
    // everything the two threads share is in `Lanes`, under its condition.
    private let lanes: Lanes
    private var finished = false
    /// The chunk handed over last, not yet posted: `end` marks it the file's last.
    private var held: FileChunk?
    /// `begin` was called and no chunk has come since.
    private var starting = false

    /// How many chunks handed to `update` the thread holds at most: `capacity` queued, one held
    /// back, one being hashed. It keeps each chunk as it was handed over, not a copy of it (the
    /// zip reader hands out chunks from a ring of buffers longer than this,
    /// `ZipEntryReader.keepsChunks`).
    package let keeps: Int

    /// `deliver` is handed each file's digest on the hashing thread as the file ends, in order.
    /// `pairs`: whether the copy lane's bytes are hashed together with the files' (where the CPU
    /// gains by it, `SHA256Hasher.pairingPays`); else the files come first and the copy is hashed
    /// alone whenever no file chunk waits.
    package init(capacity: Int = 16, pairs: Bool = true, deliver: @escaping @Sendable (SHA256Digest) -> Void) {
        let lanes = Lanes(capacity: capacity, pairs: pairs)
        self.lanes = lanes
        keeps = max(1, capacity) + 2
        Thread { Self.run(lanes, deliver: deliver) }.start()
    }

    deinit { if !finished { lanes.cancel() } }

    package func begin() {
        starting = true
    }

    package func update(_ chunk: ArraySlice<UInt8>) {
        if let held { lanes.send(held) }
        held = FileChunk(bytes: chunk, first: starting, last: false)
        starting = false
    }

    package func end() {
        var last = held ?? FileChunk(bytes: [], first: true, last: false)
        last.last = true
        lanes.send(last)
        held = nil
        starting = false
    }

    /// No more files: the thread hashes the copy lane's chunks alone from now on, without
    /// waiting for file chunks to pair them with. Does not wait (`finish` does).
    package func endFiles() {
        lanes.closeFiles()
    }

    /// Waits until every file handed over was hashed and delivered and the copy lane, if one
    /// was opened, was closed, and stops the thread.
    package func finish() {
        guard !finished else { return }
        finished = true
        lanes.closeFiles()
        lanes.waitForEnd()
    }

    /// A second stream hashed on this thread beside the files (one at a time; nil while one is
    /// open, or once the files have ended). Close it on every path (`digest` does).
    package func openCopyLane() -> CopyLane? {
        lanes.openCopy() ? CopyLane(lanes) : nil
    }

    /// Without pairing, how much of the copy is hashed between looks at the file lane: 0.09 ms
    /// at 1.45 GB/s, so that the inflating thread, whose buffers the file chunks are, never waits
    /// long for the copy.
    private static let copySlice = 128 << 10

    /// The hashing thread's loop.
    private static func run(_ lanes: Lanes, deliver: @Sendable (SHA256Digest) -> Void) {
        var fileHasher = SHA256Hasher()
        var copyHasher = SHA256Hasher()
        var file: (chunk: FileChunk, done: Int)?
        var copy: (chunk: CopyChunk, done: Int)?
        while let work = lanes.take(file: file == nil, copy: copy == nil) {
            if let next = work.file { file = (next, 0) }
            if let next = work.copy { copy = (next, 0) }
            if var current = file {
                if current.done == 0 && current.chunk.first { fileHasher = SHA256Hasher() }
                let count = current.chunk.bytes.count - current.done
                current.chunk.bytes.withUnsafeBytes { bytes in
                    let rest = UnsafeRawBufferPointer(rebasing: bytes[current.done...])
                    if lanes.pairs, var beside = copy, beside.chunk.count > beside.done, count > 0 {
                        // Both lanes: as many bytes of each, hashed together.
                        let paired = min(count, beside.chunk.count - beside.done)
                        let other = UnsafeRawBufferPointer(rebasing: beside.chunk.bytes[beside.done..<beside.done + paired])
                        SHA256Hasher.update(fileHasher, UnsafeRawBufferPointer(rebasing: rest.prefix(paired)), copyHasher, other)
                        current.done += paired
                        beside.done += paired
                        copy = beside
                    } else {
                        fileHasher.update(rest)
                        current.done += count
                    }
                }
                if current.done == current.chunk.bytes.count {
                    if current.chunk.last { deliver(fileHasher.finalize()) }
                    file = nil
                } else {
                    file = current
                }
            } else if var beside = copy, beside.chunk.count > beside.done {
                // Pairing, the files have ended (`take` gives the copy alone only then): the rest
                // at once. Not pairing: a slice, then whatever file chunk came meanwhile first.
                let end = lanes.pairs ? beside.chunk.count : min(beside.chunk.count, beside.done + Self.copySlice)
                copyHasher.update(UnsafeRawBufferPointer(rebasing: beside.chunk.bytes[beside.done..<end]))
                beside.done = end
                copy = beside
            }
            if let beside = copy, beside.done >= beside.chunk.count {
                if beside.chunk.ends {
                    beside.chunk.ticket.settle(copyHasher.finalize())
                    copyHasher = SHA256Hasher()
                    lanes.closeCopy()
                } else {
                    beside.chunk.ticket.settle(nil)
                }
                copy = nil
            }
        }
        // Cancelled, or both lanes ended: whoever still waits for a chunk of the copy is told.
        copy?.chunk.ticket.settle(nil)
        lanes.ended()
    }
}

/// A file's chunk on the file lane: `first` starts a new digest, `last` ends it (a file without
/// bytes is one empty chunk, both).
private struct FileChunk: Sendable {
    var bytes: ArraySlice<UInt8>
    var first: Bool
    var last: Bool
}

/// A chunk on the copy lane: memory its sender keeps until `ticket` is settled; `ends` marks the
/// lane's end (no bytes), whose ticket gets the digest.
private struct CopyChunk: @unchecked Sendable {
    // @unchecked: the memory behind `base` is touched by the hashing thread only until the
    // ticket is settled, and by the sender only after.
    var base: UnsafeRawPointer?
    var count: Int
    var ends: Bool
    var ticket: CopyLane.Ticket

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}

/// The copy lane of a `HashingThread`: a stream hashed on its thread, paired with the files'
/// bytes. Not for use by two threads at once.
package final class CopyLane: @unchecked Sendable {
    // @unchecked: `closed` is touched only by the lane's one caller.
    private let lanes: Lanes
    private var closed = false

    fileprivate init(_ lanes: Lanes) { self.lanes = lanes }

    deinit { close() }

    /// Hashes `chunk` next; its memory must stay as it is until the ticket is waited for.
    package func hash(_ chunk: UnsafeRawBufferPointer) -> Ticket {
        let ticket = Ticket()
        guard !closed, chunk.count > 0 else {
            ticket.settle(nil)
            return ticket
        }
        lanes.send(CopyChunk(base: chunk.baseAddress, count: chunk.count, ends: false, ticket: ticket))
        return ticket
    }

    /// Waits for every chunk and returns the digest of all; nil if the thread was cancelled.
    /// Closes the lane.
    package func digest() -> SHA256Digest? {
        guard !closed else { return nil }
        closed = true
        let ticket = Ticket()
        lanes.send(CopyChunk(base: nil, count: 0, ends: true, ticket: ticket))
        return ticket.wait()
    }

    /// Ends the lane without its digest (a copy that failed); waits for its chunks.
    package func close() {
        _ = digest()
    }

    /// Settled once a chunk was hashed (or the thread was cancelled): after `wait` returns, its
    /// memory is the sender's again.
    package final class Ticket: @unchecked Sendable {
        // @unchecked: `digest` is written before `settled` is signalled and read after waiting.
        private let settled = DispatchSemaphore(value: 0)
        private var digest: SHA256Digest?

        fileprivate func settle(_ digest: SHA256Digest?) {
            self.digest = digest
            settled.signal()
        }

        /// Waits until the chunk was hashed; the lane's digest for the lane's end.
        @discardableResult
        package func wait() -> SHA256Digest? {
            settled.wait()
            return digest
        }
    }
}

/// The two lanes' queues and state, shared by the callers and the hashing thread.
private final class Lanes: @unchecked Sendable {
    // @unchecked: every property is read and changed under `condition` only.
    private let condition = NSCondition()
    private var files: [FileChunk] = []
    private var filesHead = 0
    private var copies: [CopyChunk] = []
    private var copiesHead = 0
    private let capacity: Int
    /// How many queued file chunks wake a sleeping thread.
    private let batch: Int
    /// Whether the copy's bytes wait for file bytes to be hashed with (see `HashingThread.init`).
    let pairs: Bool
    private var filesClosed = false
    private var copyOpen = false
    private var cancelled = false
    private var threadEnded = false
    private var threadSleeps = false
    private var senderSleeps = false

    init(capacity: Int, pairs: Bool) {
        self.pairs = pairs
        self.capacity = max(1, capacity)
        batch = max(1, capacity / 4)
    }

    private var queuedFiles: Int { files.count - filesHead }
    private var queuedCopies: Int { copies.count - copiesHead }

    func send(_ chunk: FileChunk) {
        condition.lock()
        defer { condition.unlock() }
        while queuedFiles >= capacity && !cancelled {
            senderSleeps = true
            condition.wait()
            senderSleeps = false
        }
        if cancelled { return }  // nothing is hashed any more
        if filesHead > capacity {  // drop what was taken, now and then, not at every chunk
            files.removeFirst(filesHead)
            filesHead = 0
        }
        files.append(chunk)
        if threadSleeps && queuedFiles >= batch { condition.broadcast() }
    }

    func send(_ chunk: CopyChunk) {
        condition.lock()
        defer { condition.unlock() }
        guard !cancelled && !threadEnded else {
            chunk.ticket.settle(nil)
            return
        }
        if copiesHead > 8 {
            copies.removeFirst(copiesHead)
            copiesHead = 0
        }
        copies.append(chunk)
        if threadSleeps { condition.broadcast() }
    }

    func openCopy() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !copyOpen && !filesClosed && !cancelled else { return false }
        copyOpen = true
        return true
    }

    func closeCopy() {
        condition.lock()
        copyOpen = false
        condition.unlock()
    }

    func closeFiles() {
        condition.lock()
        filesClosed = true
        condition.broadcast()
        condition.unlock()
    }

    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        while !threadEnded { condition.wait() }
        condition.unlock()
    }

    func waitForEnd() {
        condition.lock()
        while !threadEnded { condition.wait() }
        condition.unlock()
    }

    /// The hashing thread has left its loop: every chunk still queued on the copy lane is
    /// settled without a digest, and whoever waits for the end is woken.
    func ended() {
        condition.lock()
        threadEnded = true
        for chunk in copies[copiesHead...] { chunk.ticket.settle(nil) }
        copies.removeAll()
        copiesHead = 0
        condition.broadcast()
        condition.unlock()
    }

    /// The hashing thread's next work: a file chunk if `file` (it has none in hand) and one is
    /// queued, a copy chunk likewise; nil once cancelled, or once the files have ended, the copy
    /// lane is closed and nothing is left. Returns with a file chunk (and a copy chunk if one is
    /// there), or with the copy alone only once the files have ended.
    struct Work {
        var file: FileChunk?
        var copy: CopyChunk?
    }

    func take(file wantsFile: Bool, copy wantsCopy: Bool) -> Work? {
        condition.lock()
        defer { condition.unlock() }
        var work = Work()
        while true {
            if cancelled { return nil }
            if wantsFile && work.file == nil && queuedFiles > 0 {
                work.file = files[filesHead]
                files[filesHead].bytes = []  // the chunk's buffer is the zip reader's again once hashed
                filesHead += 1
                if senderSleeps && queuedFiles <= capacity / 2 { condition.broadcast() }
            }
            if wantsCopy && work.copy == nil && queuedCopies > 0 {
                work.copy = copies[copiesHead]
                copiesHead += 1
            }
            // A file chunk in hand or taken: go, with the copy's if there is one.
            if !wantsFile || work.file != nil { return work }
            if !wantsCopy || work.copy != nil {
                // Only the copy has bytes: wait for a file chunk to pair them with, until the
                // files have ended (nothing waits for the copy before then); without pairing,
                // hash them now.
                if filesClosed || !pairs { return work }
            } else if filesClosed && !copyOpen && queuedFiles == 0 && queuedCopies == 0 {
                return nil
            }
            // Sleep until a batch of file chunks or a copy chunk waits, or a millisecond passed
            // (then whatever is queued is taken).
            threadSleeps = true
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.001))
            threadSleeps = false
        }
    }
}
