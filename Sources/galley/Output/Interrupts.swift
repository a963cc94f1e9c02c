import Dispatch
import Foundation

/// What the CLI does on SIGINT (Ctrl-C) and SIGTERM (a CI runner or systemd stopping it) while
/// a command writes: runs `cleanUp` (removing the command's temporary files), then exits with
/// 128 + the signal's number, as shells report it. Keep the returned sources for as long as the
/// command runs; until then the signals are delivered to them instead of killing the process.
enum Interrupts {
    static func onInterrupt(_ cleanUp: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                cleanUp()
                Terminal.standardError.write("\ninterrupted: temporary files removed\n")
                // `_exit`, not `exit`: the main thread is still writing, and `exit` would run
                // the process's destructors under it (a crash, seen as SIGSEGV).
                _exit(128 + number)
            }
            source.resume()
            return source
        }
    }
}
