import Dispatch
import Foundation

/// What the CLI does on SIGINT (Ctrl-C) and SIGTERM (a CI runner or systemd stopping it) while
/// a command writes: runs `cleanUp` (removing the command's temporary files), then exits with
/// 128 + the signal's number, as shells report it. Keep the returned value for as long as the
/// command runs; until `end()` the signals are delivered to it instead of killing the process.
final class Interrupts: @unchecked Sendable {
    // Held by a signal's handler from its cleanup to `_exit`, and taken by `end()`: once either
    // has it, the other can no longer act. Without it the command's work could fail on the
    // temporary the handler just removed and exit 2 (reporting that failure) before the
    // handler's own exit, as CI once saw.
    private let exitLock = NSLock()
    // Guards `ended` and `sources`.
    private let state = NSLock()
    private var ended = false
    private var sources: [any DispatchSourceSignal] = []

    private init() {}

    /// For a command that writes: `cleanUp` then exit 128 + signal.
    static func onInterrupt(_ cleanUp: @escaping @Sendable () -> Void) -> Interrupts {
        let interrupts = Interrupts()
        interrupts.handle { [interrupts] number in
            interrupts.exitLock.lock()
            cleanUp()
            Terminal.standardError.write("\ninterrupted: temporary files removed\n")
            // `_exit`, not `exit`: the main thread is still writing, and `exit` would run
            // the process's destructors under it (a crash, seen as SIGSEGV).
            _exit(128 + number)
        }
        return interrupts
    }

    /// For a command that runs until stopped (`sync --every`): SIGINT and SIGTERM end it at
    /// once with status 0, a stop asked for rather than a failure (systemd's view too). Handled
    /// explicitly, since a parent that ignores SIGTERM passes the ignoring on to its children.
    static func exitOnStop() -> Interrupts {
        let interrupts = Interrupts()
        interrupts.handle { _ in _exit(0) }
        return interrupts
    }

    /// The command's work is over (done or failed), before it reports: if a signal's handler is
    /// already running, this waits for it to end the process (and so never returns); otherwise
    /// the signals get their default action back. Calling it again does nothing.
    func end() {
        state.lock()
        defer { state.unlock() }
        guard !ended else { return }
        ended = true
        exitLock.lock()  // never released: a handler that starts now waits until the process exits
        for source in sources { source.cancel() }
        for number in [SIGINT, SIGTERM] { signal(number, SIG_DFL) }
    }

    private func handle(_ action: @escaping @Sendable (Int32) -> Void) {
        state.lock()
        defer { state.unlock() }
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { action(number) }
            source.resume()
            return source
        }
    }
}
