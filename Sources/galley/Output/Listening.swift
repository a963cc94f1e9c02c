import Dispatch
import GalleyCore
import GalleyServe

/// Runs a server (`serve`, `preview`) from a synchronous command until it stops. Once it
/// listens it says where, once: one JSON document with `--json` (scripts and tests read the
/// port from it with `--port 0`), a line otherwise, nothing with `--quiet`. A server that never
/// got to listen is "cannot listen on HOST:PORT" with a hint; one that stopped later says so.
func serveUntilStopped<Listening: Encodable & Sendable>(
    host: String, port: Int, json: Bool, quiet: Bool, what: String,
    listening: @escaping @Sendable (_ port: Int) -> (document: Listening, line: String),
    run: @escaping @Sendable (_ onListening: @escaping @Sendable (Int) -> Void) async throws -> Void
) throws {
    let finished = DispatchSemaphore(value: 0)
    let outcome = ServerOutcome()
    // One server per process, so this runs once, before any task.
    _ = GalleyServer.runTasksOnEventLoops()
    Task {
        do {
            try await run { port in
                outcome.listening = true
                let (document, line) = listening(port)
                if json {
                    Terminal.standardOutput.write(JSONDocument.encode(document))
                } else if !quiet {
                    Terminal.standardOutput.write(line + "\n")
                }
            }
        } catch {
            outcome.error = error
        }
        finished.signal()
    }
    finished.wait()
    if let error = outcome.error {
        guard outcome.listening else {
            throw GalleyError("cannot listen on \(host):\(port): \(error)", id: .failed,
                              hint: "Another program may have the port: choose another with --port (0 takes any free one).")
        }
        throw GalleyError("\(what) stopped: \(error)", id: .failed)
    }
}

/// The server task's outcome, handed to the waiting main thread.
/// (The semaphore the main thread waits on orders these writes before its reads.)
private final class ServerOutcome: @unchecked Sendable {
    var error: (any Error)?
    var listening = false
}
