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
