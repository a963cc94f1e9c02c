import Foundation
import NIOConcurrencyHelpers
import Prometheus

/// Counts a server's open connections against `--max-connections`. A connection past the cap
/// is still accepted (the kernel would otherwise queue it, health probes behind it), but
/// `RevalidationHandler` answers it only `/healthz` and `/metrics`: everything else is a 503
/// with `Retry-After`, and the connection is closed.
public final class ConnectionGate: Sendable {
    let limit: Int
    private let open = NIOLockedValueBox(0)
    /// Where connections answered 503 for being past the cap are counted (`/metrics`).
    private let refusals: Counter?

    init(limit: Int, refusals: Counter? = nil) {
        self.limit = limit
        self.refusals = refusals
    }

    /// Counts a new connection; false when it is past the cap.
    func enter() -> Bool {
        open.withLockedValue { open in
            open += 1
            return open <= limit
        }
    }

    func leave() { open.withLockedValue { $0 -= 1 } }

    func refused() { refusals?.increment() }

    var openNow: Int { open.withLockedValue { $0 } }

    /// The requests a connection past the cap is still answered: what operators watch the
    /// server with while it is full.
    static func isOperatorProbe(_ uri: String) -> Bool {
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return path == "/healthz" || path == "/metrics"
    }

    /// Raises this process's soft limit of open files towards the hard one, so that `wanted`
    /// connections fit beside the files the server itself holds; returns how many connections
    /// fit (`wanted` when the limit allows it). Debian's default soft limit (1024) is below the
    /// default cap; its hard limit is usually far above.
    public static func connectionsThatFit(_ wanted: Int, reserve: Int = 64) -> Int {
        var limits = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return wanted }
        let needed = rlim_t(wanted + reserve)
        if limits.rlim_cur < needed, limits.rlim_max > limits.rlim_cur {
            var raised = limits
            raised.rlim_cur = min(needed, limits.rlim_max)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limits = raised }
        }
        let fits = Int(clamping: limits.rlim_cur) - reserve
        return max(1, min(wanted, fits))
    }
}
