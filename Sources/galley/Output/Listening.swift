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
    // One server per process, so this runs once, before any task.
    FreedMemory.twoHeaps()
    _ = GalleyServer.runTasksOnEventLoops()
    let started = Box<Bool>()
    do {
        try runToEnd {
            try await run { port in
                started.value = true
                let (document, line) = listening(port)
                if json {
                    Terminal.standardOutput.write(JSONDocument.encode(document))
                } else if !quiet {
                    Terminal.standardOutput.write(line + "\n")
                }
            }
        }
    } catch {
        guard started.value == true else {
            let (reason, hint) = GalleyServer.listenFailure(error, port: port)
            throw GalleyError("cannot listen on \(host):\(port): \(reason)", id: .failed, hint: hint)
        }
        throw GalleyError("\(what) stopped: \(error)", id: .failed)
    }
}

/// Runs async work from a synchronous command to its end and returns its result (or
/// rethrows its error).
func runToEnd<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let finished = DispatchSemaphore(value: 0)
    let box = Box<Result<T, any Error>>()
    Task {
        do { box.value = .success(try await work()) } catch { box.value = .failure(error) }
        finished.signal()
    }
    finished.wait()
    guard let result = box.value else { throw GalleyError("the work stopped without an outcome", id: .failed) }
    return try result.get()
}

/// A value handed from a task to the thread that waits for it (`runToEnd`'s semaphore orders
/// the write before the read).
final class Box<Value>: @unchecked Sendable {
    var value: Value?
}

