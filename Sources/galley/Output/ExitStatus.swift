import ArgumentParser
import GalleyCore

/// Exit statuses every command shares: 0 done, 1 the input has problems, 2 could not run.
enum Status {
    static let problems = ExitCode(1)
    static let couldNotRun = ExitCode(2)
}

/// Runs a command's work, reporting its errors on standard error and mapping them to the shared
/// exit statuses: findings in the input (1), could not run (2).
func reportingErrors(_ body: () throws -> Void) throws {
    let stderr = Terminal.standardError
    do {
        try body()
    } catch let error as DiagnosticsError {
        stderr.report(error.diagnostics, base: ".")
        throw Status.problems
    } catch let error as GalleyError {
        stderr.report(error)
        throw Status.couldNotRun
    }
}
