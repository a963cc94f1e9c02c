@testable import GalleyServe
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// What downloads may hold (`ChunkBudget`) and when a download whose reader takes nothing is
/// given up (`StallWatch`).
@Suite struct ChunkBudgetTests {
    @Test func grantsShrinkToTheFloorAsTheBudgetIsSpentAndComeBack() {
        let budget = ChunkBudget(limit: 1000, floor: 100)
        #expect(budget.take(600) == 600)
        #expect(budget.take(600) == 400, "what is left")
        #expect(budget.take(600) == 100, "never less than the floor")
        #expect(budget.take(50) == 50, "never more than asked")
        #expect(budget.inUse == 1150)
        budget.giveBack(600)
        budget.giveBack(400)
        #expect(budget.take(600) == 600)
    }

    @Test func aDownloadWaitingPastTheTimeoutIsStalledAndOneThatMovesIsNot() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let stalled = NIOLockedValueBox(0)
        let moving = StallWatch(timeout: .milliseconds(200), on: loop) { stalled.withLockedValue { $0 += 1 } }
        // A reader that takes each chunk at once, over far longer than the timeout.
        for _ in 0..<8 {
            moving.waiting()
            moving.progressed()
            try await Task.sleep(for: .milliseconds(100))
        }
        moving.stop()
        #expect(stalled.withLockedValue { $0 } == 0, "no wait was as long as the timeout")
        let stuck = StallWatch(timeout: .milliseconds(200), on: loop) { stalled.withLockedValue { $0 += 1 } }
        stuck.waiting()
        let deadline = ContinuousClock.now + .seconds(30)
        while stalled.withLockedValue({ $0 }) == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(600))
        stuck.stop()
        #expect(stalled.withLockedValue { $0 } == 1, "stalled once, not once per look")
    }
}
