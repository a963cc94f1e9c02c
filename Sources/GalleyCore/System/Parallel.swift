import Foundation

/// Results written from several threads, one slot each, under a lock.
private final class ResultSlots<R>: @unchecked Sendable {
    private var results: [R?]
    private let lock = NSLock()

    package init(_ count: Int) { results = Array(repeating: nil, count: count) }

    package func set(_ index: Int, _ value: R) {
        lock.lock()
        results[index] = value
        lock.unlock()
    }

    package func all() -> [R] { results.compactMap { $0 } }
}

/// Maps `items` on every core, keeping their order. `transform` must not touch shared mutable state.
package func parallelMap<T: Sendable, R: Sendable>(_ items: [T], _ transform: @Sendable (T) -> R) -> [R] {
    guard items.count > 1 else { return items.map(transform) }
    let slots = ResultSlots<R>(items.count)
    DispatchQueue.concurrentPerform(iterations: items.count) { index in
        slots.set(index, transform(items[index]))
    }
    return slots.all()
}

/// Runs `body` on each of `items` on every core and answers its first failure in the items'
/// order, or nil. The items go out in runs of `run`, each stopping at its first failure, so
/// what is held is one answer per run, not per item: a render's copy of 60,000 files into its
/// site held 9 MB of per-item answers from `parallelMap` at its peak.
package func parallelFirstFailure<T: Sendable, E: Sendable>(
    _ items: [T], run: Int = 256, _ body: @Sendable (T) -> E?
) -> E? {
    let size = max(1, run)
    let starts = Array(stride(from: 0, to: items.count, by: size))
    let failures = parallelMap(starts) { start -> E? in
        for item in items[start..<min(start + size, items.count)] {
            if let failure = body(item) { return failure }
        }
        return nil
    }
    return failures.lazy.compactMap { $0 }.first
}

/// `parallelMap` begun now and collected later: each item is transformed on the shared worker
/// threads (GCD's global queue, no thread of its own) while the caller does other work;
/// `results()` waits for them all. For the next batch of a stream read while this one is
/// finished on the calling thread. Call `results()` (or `wait()`) on every path before the
/// items' owner goes away.
package final class BackgroundMap<R: Sendable>: @unchecked Sendable {
    // @unchecked: the slots are written under their lock, read after the group's wait.
    private let slots: ResultSlots<R>
    private let group = DispatchGroup()

    package init<T: Sendable>(_ items: [T], _ transform: @escaping @Sendable (T) -> R) {
        let slots = ResultSlots<R>(items.count)
        self.slots = slots
        for (index, item) in items.enumerated() {
            DispatchQueue.global().async(group: group) { slots.set(index, transform(item)) }
        }
    }

    /// Waits for every item.
    package func wait() { group.wait() }

    /// Every item's result, in order, once all are done.
    package func results() -> [R] {
        group.wait()
        return slots.all()
    }
}

/// A value one thread writes and another reads once a semaphore says it is there.
private final class Handoff<T>: @unchecked Sendable {
    var value: T?
    let done = DispatchSemaphore(value: 0)
}

/// A value handed over once: the first `take` gets it, later ones nil. For what one step of a
/// long operation needs and the caller would otherwise keep alive to its end (an import's
/// zip directory, held while the rows are written, was megabytes of its peak).
package final class TakeOnce<T: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: T?

    package init(_ value: T?) { self.value = value }

    package func take() -> T? {
        lock.lock()
        defer { lock.unlock() }
        defer { value = nil }
        return value
    }

    /// `body` on the value, without taking it; nil once it was taken.
    package func peek<R>(_ body: (T) throws -> R) rethrows -> R? {
        lock.lock()
        defer { lock.unlock() }
        return try value.map(body)
    }
}

/// Runs `background` on a thread of its own while `body` runs on this one, and returns both
/// outcomes once both have ended (so nothing `background` does can outlive the call). For two
/// independent streams of work over the same input, such as keeping a copy of a zip while
/// inflating it.
package func alongside<A, B: Sendable>(
    _ background: @escaping @Sendable () throws -> B, _ body: () throws -> A
) -> (body: Result<A, any Error>, background: Result<B, any Error>) {
    let handoff = Handoff<Result<B, any Error>>()
    let thread = Thread {
        handoff.value = Result { try background() }
        handoff.done.signal()
    }
    thread.start()
    let first = Result { try body() }
    handoff.done.wait()
    return (first, handoff.value ?? .failure(CancellationError()))
}

/// Thrown by `pipeline`'s `send` once the consumer has stopped: the producer ends at once.
package struct PipelineStopped: Error {}

/// Runs `produce` on a thread of its own and hands each item it sends to `consume` on this
/// thread, in order, through a queue of at most `capacity` items (a producer ahead of its
/// consumer waits, so memory stays flat). For a stream of work with two stages of about the
/// same cost, such as parsing a manifest while another thread writes its rows: the calling
/// thread keeps what must stay on it (a database transaction).
///
/// An error thrown by `consume` stops the producer (its next `send` throws `PipelineStopped`)
/// and is rethrown; an error thrown by `produce` is rethrown once the items it sent before are
/// consumed. Either way the producer's thread has ended when this returns.
package func pipeline<Item: Sendable>(
    capacity: Int,
    produce: @escaping @Sendable (_ send: (Item) throws -> Void) throws -> Void,
    consume: (Item) throws -> Void
) throws {
    let channel = PipelineChannel<Item>(capacity: capacity)
    Thread {
        let outcome = Result { try produce(channel.send) }
        channel.close(outcome)
    }.start()
    do {
        while let item = try channel.receive() { try consume(item) }
    } catch {
        channel.stop()
        throw error
    }
}

/// `pipeline` the other way round: `consume` runs on a thread of its own, and this thread sends
/// it items through a queue of at most `capacity` (a sender ahead of the consumer waits, so
/// memory stays flat). For work that must stay on the calling thread while a second stage
/// keeps up beside it, such as building an issue's articles while their latest.json is being
/// deflated.
///
/// Always end it with `finish()` (everything sent was consumed; the consumer's error, if any,
/// is rethrown) or `cancel()` (what is still queued is dropped): both return only once the
/// consumer's thread has ended, so nothing it touches is used by two threads at once. A `send`
/// after the consumer failed throws that failure.
package final class BackgroundConsumer<Item: Sendable>: @unchecked Sendable {
    // @unchecked: `outcome` is written by the consumer's thread before it signals `done` and read
    // here only after waiting on it; `ended` is only touched by the sending thread.
    private let channel: PipelineChannel<Item>
    private let done = DispatchSemaphore(value: 0)
    private var outcome: Result<Void, any Error>?
    private var ended = false

    package init(capacity: Int, consume: @escaping @Sendable (Item) throws -> Void) {
        let channel = PipelineChannel<Item>(capacity: capacity)
        self.channel = channel
        Thread { [self] in
            do {
                while let item = try channel.receive() { try consume(item) }
                outcome = .success(())
            } catch {
                channel.stop()
                outcome = .failure(error)
            }
            done.signal()
        }.start()
    }

    /// Queues `item`; throws the consumer's failure, or `PipelineStopped` once ended (a send
    /// after `finish` or `cancel` would wait for ever on a queue no one takes from).
    package func send(_ item: Item) throws {
        if ended { throw PipelineStopped() }
        do {
            try channel.send(item)
        } catch is PipelineStopped {
            try end(.success(())).get()
            throw PipelineStopped()
        }
    }

    /// Waits until everything sent was consumed; rethrows the consumer's error.
    package func finish() throws { try end(.success(())).get() }

    /// Stops the consumer at its next item and waits for its thread to end. After `finish()`,
    /// does nothing.
    package func cancel() { _ = end(.failure(CancellationError())) }

    private func end(_ how: Result<Void, any Error>) -> Result<Void, any Error> {
        if !ended {
            ended = true
            let cancelled = if case .failure = how { true } else { false }
            channel.close(how, discarding: cancelled)
            done.wait()
        }
        return outcome ?? .failure(CancellationError())
    }
}

/// A queue of at most `capacity` items between one producing thread and one consuming thread
/// that each run a loop of their own (`pipeline` and `BackgroundConsumer` own the consumer's
/// loop; this leaves it to the caller, for a consumer that must run inside something else, such
/// as a database transaction on its connection's thread). The producer `send`s and then
/// `close`s; the consumer `receive`s until nil, or `stop`s, after which every `send` throws
/// `PipelineStopped`.
package final class Handover<Item: Sendable>: Sendable {
    private let channel: PipelineChannel<Item>

    package init(capacity: Int) { channel = PipelineChannel(capacity: capacity) }

    /// Queues `item`, waiting while the queue is full; throws `PipelineStopped` once the
    /// consumer stopped.
    package func send(_ item: Item) throws { try channel.send(item) }

    /// No more items: the consumer's `receive` gives nil once it has taken what is queued, or
    /// throws `error` at once (what is queued is dropped).
    package func close(failing error: (any Error)? = nil) {
        if let error { channel.close(.failure(error), discarding: true) } else { channel.close(.success(())) }
    }

    /// The next item; nil once closed and empty; the error it was closed with.
    package func receive() throws -> Item? { try channel.receive() }

    /// What `receive(orIdle:)` gives.
    package enum Receipt {
        case item(Item)
        /// Nothing came for a millisecond: the consumer may do something else and ask again.
        case idle
        /// Closed and empty.
        case ended
    }

    /// As `receive`, but `idle` when the queue stayed empty for a millisecond, for a consumer
    /// with other work to do meanwhile.
    package func receiveOrIdle() throws -> Receipt { try channel.receive(idle: true) }

    /// The consumer takes no more: queued items are dropped and `send` throws from now on.
    package func stop() { channel.stop() }
}

/// The queue between `pipeline`'s two threads.
///
/// Waking a sleeping thread costs a futex call and two context switches, several microseconds:
/// more than the work of one small item (a 10 KiB file's hash, an article's rows). Woken at
/// every item, the faster side slept and woke once per item (114,000 context switches in a
/// 30,000-article import). So the sides wake each other in batches: a consumer that finds the
/// queue empty sleeps until `batch` items wait (or the producer ends, or a millisecond passes
/// with something queued, so a slow or paused producer is never kept waiting on), and a
/// producer that found the queue full sleeps until half of it was taken. (A consumer with
/// nothing queued looks again every millisecond: a few microseconds of a core that has nothing
/// else to do for this pipeline, while the producer is the slower side.)
private final class PipelineChannel<Item: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Item] = []
    private var head = 0
    private let capacity: Int
    /// How many items wake a sleeping consumer.
    private let batch: Int
    /// The producer's outcome once it has ended.
    private var ended: Result<Void, any Error>?
    private var stopped = false
    private var consumerSleeps = false
    private var producerSleeps = false

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        batch = max(1, capacity / 4)
    }

    private var queued: Int { items.count - head }

    func send(_ item: Item) throws {
        condition.lock()
        defer { condition.unlock() }
        while queued >= capacity && !stopped {
            producerSleeps = true
            condition.wait()
            producerSleeps = false
        }
        if stopped { throw PipelineStopped() }
        if head > capacity {  // drop what was taken, now and then, not at every item
            items.removeFirst(head)
            head = 0
        }
        items.append(item)
        if consumerSleeps && queued >= batch { condition.broadcast() }
    }

    /// The next item, nil once the producer has ended and everything it sent was taken, or
    /// the producer's error at that point.
    func receive() throws -> Item? {
        switch try receive(idle: false) {
        case .item(let item): item
        case .idle, .ended: nil
        }
    }

    /// The next item; with `idle`, `.idle` once a millisecond passed with nothing queued.
    func receive(idle: Bool) throws -> Handover<Item>.Receipt {
        condition.lock()
        defer { condition.unlock() }
        if queued == 0 {
            // Sleep until a batch waits; a millisecond with something queued is enough, so a
            // producer that sends one item and then pauses is not kept waiting.
            while queued < batch && ended == nil {
                consumerSleeps = true
                let signalled = condition.wait(until: Date(timeIntervalSinceNow: 0.001))
                consumerSleeps = false
                if !signalled && queued > 0 { break }
                if !signalled && idle { return .idle }
            }
        }
        if queued > 0 {
            let item = items[head]
            head += 1
            if producerSleeps && queued <= capacity / 2 { condition.broadcast() }
            return .item(item)
        }
        try ended?.get()
        return .ended
    }

    /// The producer has ended with `outcome`; with `discarding`, what it queued and the
    /// consumer did not take yet is dropped (it gave up).
    func close(_ outcome: Result<Void, any Error>, discarding: Bool = false) {
        condition.lock()
        ended = outcome
        if discarding {
            items.removeAll()
            head = 0
        }
        condition.broadcast()
        condition.unlock()
    }

    /// The consumer gave up: wakes the producer (its `send` throws) and waits for it to end.
    func stop() {
        condition.lock()
        stopped = true
        items.removeAll()
        head = 0
        condition.broadcast()
        while ended == nil { condition.wait() }
        condition.unlock()
    }
}
