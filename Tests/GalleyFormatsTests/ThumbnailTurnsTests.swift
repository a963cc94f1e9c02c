import Foundation
import Synchronization
import Testing
@testable import GalleyFormats

/// `ThumbnailMaker` makes at most one thumbnail more than the cores at once, however many
/// threads ask (pack asks from GCD's pool, which grows while its threads wait): each libvips
/// pipeline holds megabytes of pixels.
@Suite struct ThumbnailTurnsTests {
    final class Counter: Sendable {
        let active = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        let done = Atomic<Int>(0)
    }

    /// `body` on `count` threads of their own at once (GCD's concurrentPerform would use one
    /// per core only, which could not show more than two at once here).
    func onThreads(_ count: Int, _ body: @escaping @Sendable () -> Void) {
        let group = DispatchGroup()
        for _ in 0..<count {
            group.enter()
            Thread {
                body()
                group.leave()
            }.start()
        }
        group.wait()
    }

    /// Eight threads ask at once; each holds its turn 20 ms. A count below one is one.
    @Test(arguments: [(2, 2), (0, 1)])
    func noMoreThanItsTurnsRunAtOnce(count: Int, allowed: Int) {
        let turns = ThumbnailMaker.Turns(count)
        let counter = Counter()
        onThreads(8) {
            turns.take {
                let now = counter.active.add(1, ordering: .sequentiallyConsistent).newValue
                counter.most.max(now, ordering: .sequentiallyConsistent)
                usleep(20_000)
                counter.active.subtract(1, ordering: .sequentiallyConsistent)
                counter.done.add(1, ordering: .sequentiallyConsistent)
            }
        }
        #expect(counter.done.load(ordering: .sequentiallyConsistent) == 8)
        let most = counter.most.load(ordering: .sequentiallyConsistent)
        #expect(most >= 1 && most <= allowed)
        #expect(counter.active.load(ordering: .sequentiallyConsistent) == 0)
    }

    /// A thumbnail made again alone (to read libvips's one error buffer undisturbed) runs
    /// while no other turn is taken, and two such never wait on each other's turns.
    @Test func aTurnTakenAloneRunsWithNoOtherTurnTaken() {
        let turns = ThumbnailMaker.Turns(3)
        let counter = Counter()
        let overlapped = Atomic<Int>(0)
        let alone = Atomic<Int>(0)
        onThreads(12) {
            let isAlone = counter.done.add(1, ordering: .sequentiallyConsistent).newValue % 4 == 0
            if isAlone {
                turns.takeAlone {
                    alone.add(1, ordering: .sequentiallyConsistent)
                    if counter.active.load(ordering: .sequentiallyConsistent) != 0 { overlapped.add(1, ordering: .sequentiallyConsistent) }
                    usleep(10_000)
                    if counter.active.load(ordering: .sequentiallyConsistent) != 0 { overlapped.add(1, ordering: .sequentiallyConsistent) }
                    alone.subtract(1, ordering: .sequentiallyConsistent)
                }
            } else {
                turns.take {
                    counter.active.add(1, ordering: .sequentiallyConsistent)
                    if alone.load(ordering: .sequentiallyConsistent) != 0 { overlapped.add(1, ordering: .sequentiallyConsistent) }
                    usleep(10_000)
                    counter.active.subtract(1, ordering: .sequentiallyConsistent)
                }
            }
        }
        #expect(counter.done.load(ordering: .sequentiallyConsistent) == 12)
        #expect(overlapped.load(ordering: .sequentiallyConsistent) == 0)
    }
}
