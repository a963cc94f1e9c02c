import Dispatch
import Foundation

/// What the CLI does on SIGINT (Ctrl-C) and SIGTERM (a CI runner or systemd stopping it) while
/// a command writes: runs `cleanUp` (removing the command's temporary files), then exits with
/// 128 + the signal's number, as shells report it. Keep the returned sources for as long as the
/// command runs; until then the signals are delivered to them instead of killing the process.
enum Interrupts {
    static func onInterrupt(_ cleanUp: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        handle { number in
            cleanUp()
            Terminal.standardError.write("\ninterrupted: temporary files removed\n")
            // `_exit`, not `exit`: the main thread is still writing, and `exit` would run
            // the process's destructors under it (a crash, seen as SIGSEGV).
            _exit(128 + number)
        }
    }

    /// For a command that runs until stopped (`sync --every`): SIGINT and SIGTERM end it at
    /// once with status 0, a stop asked for rather than a failure (systemd's view too). Handled
    /// explicitly, since a parent that ignores SIGTERM passes the ignoring on to its children.
    static func exitOnStop() -> [any DispatchSourceSignal] {
        handle { _ in _exit(0) }
    }

    private static func handle(_ action: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { action(number) }
            source.resume()
            return source
        }
    }
}
