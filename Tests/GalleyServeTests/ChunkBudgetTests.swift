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
        for _ in 0..<8 {
            moving.waiting()
            try await Task.sleep(for: .milliseconds(50))
            moving.progressed()
        }
        moving.stop()
        #expect(stalled.withLockedValue { $0 } == 0, "each wait was shorter than the timeout")
        let stuck = StallWatch(timeout: .milliseconds(200), on: loop) { stalled.withLockedValue { $0 += 1 } }
        stuck.waiting()
        try await Task.sleep(for: .milliseconds(700))
        stuck.stop()
        #expect(stalled.withLockedValue { $0 } == 1, "stalled once, not once per look")
    }
}
