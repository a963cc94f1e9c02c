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

/// A value one thread writes and another reads once a semaphore says it is there.
private final class Handoff<T>: @unchecked Sendable {
    var value: T?
    let done = DispatchSemaphore(value: 0)
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
