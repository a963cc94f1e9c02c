import NIOConcurrencyHelpers
import NIOCore
import Prometheus

/// The bytes of file chunks every download of one server may hold at once. A download asks for
/// a full chunk and gets what is left of the budget, never less than `floor`: a few fast
/// downloads read large chunks (throughput), thousands of slow ones hold `floor` each (memory)
/// instead of a full chunk each, and nobody waits for the budget (a slow reader holding it
/// cannot stall the others; the send timeout frees what it holds).
final class ChunkBudget: Sendable {
    /// What all downloads' grants may add up to before each gets `floor`.
    let limit: Int
    /// What any download gets, however spent the budget is.
    let floor: Int
    private let held = NIOLockedValueBox(0)

    /// 4 MiB gives eight downloads their full 512 KiB chunks (serve_bench's four fast ones
    /// run at full speed); 2,000 stalled readers then hold 4 MiB + 2,000 x 8 KiB of chunks
    /// instead of 16 MiB + 2,000 x 16 KiB (bench/slow_readers.py).
    init(limit: Int = 4 << 20, floor: Int = 8 << 10) {
        self.limit = limit
        self.floor = floor
    }

    /// Bytes of at most `wanted` the caller may read now; `giveBack` them once sent.
    func take(_ wanted: Int) -> Int {
        held.withLockedValue { held in
            let granted = min(wanted, max(limit - held, floor))
            held += granted
            return granted
        }
    }

    func giveBack(_ bytes: Int) {
        guard bytes > 0 else { return }
        held.withLockedValue { $0 -= bytes }
    }

    /// What the downloads hold now (for `/metrics`).
    var inUse: Int { held.withLockedValue { $0 } }
}

/// How a server sends a download: the chunk budget all downloads share, how long a chunk may
/// wait for its reader (`ServeOptions.sendTimeout`), and where the closures that wait causes
/// are counted (nil: nowhere).
struct SendLimits: Sendable {
    let budget: ChunkBudget
    let sendTimeout: TimeAmount
    var timeouts: Counter?
}

/// Calls `stalled` once a download has waited `timeout` for its reader to take one chunk. One
/// timer per download, re-armed when it fires, rather than one armed and cancelled per chunk:
/// NIO cancels a timer by searching every timer of its loop, which with a few hundred slow
/// downloads was most of serve's time (perf, 300 downloads whose readers take nothing).
final class StallWatch: Sendable {
    private struct State {
        var waitingSince: NIODeadline?
        var timer: Scheduled<Void>?
        var stopped = false
    }

    private let timeout: TimeAmount
    private let eventLoop: any EventLoop
    private let stalled: @Sendable () -> Void
    private let state = NIOLockedValueBox(State())

    init(timeout: TimeAmount, on eventLoop: any EventLoop, _ stalled: @escaping @Sendable () -> Void) {
        (self.timeout, self.eventLoop, self.stalled) = (timeout, eventLoop, stalled)
        arm(at: .now() + timeout)
    }

    /// The download waits for its reader from now.
    func waiting() { state.withLockedValue { $0.waitingSince = .now() } }

    /// The reader took what it was waited on for.
    func progressed() { state.withLockedValue { $0.waitingSince = nil } }

    func stop() {
        let timer = state.withLockedValue { state in
            state.stopped = true
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
    }

    private func arm(at deadline: NIODeadline) {
        let timer = eventLoop.scheduleTask(deadline: deadline) { self.due() }
        let stopped = state.withLockedValue { state in
            if !state.stopped { state.timer = timer }
            return state.stopped
        }
        if stopped { timer.cancel() }
    }

    private func due() {
        let now = NIODeadline.now()
        enum Next { case stall, look(at: NIODeadline), none }
        let next: Next = state.withLockedValue { state in
            state.timer = nil
            guard !state.stopped else { return .none }
            guard let since = state.waitingSince else { return .look(at: now + timeout) }
            if now - since >= timeout {
                state.stopped = true
                return .stall
            }
            return .look(at: since + timeout)
        }
        switch next {
        case .stall: stalled()
        case .look(let deadline): arm(at: deadline)
        case .none: break
        }
    }
}
