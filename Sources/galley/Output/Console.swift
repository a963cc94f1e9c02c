import ArgumentParser
import Foundation
import GalleyCore

/// How much a command says on standard error.
enum Verbosity: Comparable {
    /// Findings and errors only.
    case quiet
    case normal
    /// Also what galley is doing and how long it took.
    case verbose
}

/// The output options every command takes.
struct OutputOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Print only findings and errors: no progress bar, no summary lines, no notes.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Also say what galley does and how long each step takes (on standard error).")
    var verbose = false

    @Option(help: "Colour: auto (on a terminal, unless NO_COLOR is set or TERM=dumb), always or never.")
    var color: ColorMode = .auto

    @Flag(help: "Print one JSON document on standard output, errors included (docs/json.md describes each).")
    var json = false

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose contradict each other: give one of them") }
    }

    var console: Console { console(json: json) }

    /// The console, for a command whose JSON is chosen another way too (`validate --format json`).
    func console(json: Bool) -> Console {
        Console(
            out: Terminal(fd: 1, color: color), err: Terminal(fd: 2, color: color),
            verbosity: quiet ? .quiet : verbose ? .verbose : .normal, json: json)
    }
}

/// Where a command's words go, by what they are:
/// - the result (a listing, a rendered page, the JSON document): standard output, always;
/// - findings and errors: standard error, always;
/// - status lines (`packed …`), notes and progress: standard error or output as each command
///   documents, never under `--quiet`, and no status line on standard output under `--json`;
/// - details: standard error under `--verbose` only.
struct Console {
    let out: Terminal
    let err: Terminal
    let verbosity: Verbosity
    let json: Bool

    /// A summary line on standard output (`packed dist/x.zip …`): not under --quiet or --json.
    func status(_ line: String) {
        guard verbosity > .quiet, !json else { return }
        out.write(line + "\n")
    }

    /// A note on standard error (why a listing is empty, that a search was capped): not under --quiet.
    func note(_ line: String) {
        guard verbosity > .quiet else { return }
        err.write(line + "\n")
    }

    /// What galley is doing, on standard error: under --verbose only.
    func detail(_ line: String) {
        guard verbosity == .verbose else { return }
        err.write("· " + line + "\n")
    }

    /// Times `body` and reports it as a detail (`· read 4 articles: 12 ms`).
    func timed<T>(_ what: String, _ body: () throws -> T) rethrows -> T {
        guard verbosity == .verbose else { return try body() }
        let start = DispatchTime.now().uptimeNanoseconds
        let value = try body()
        let ms = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        detail("\(what): \(ms < 10 ? String(format: "%.1f", ms) : String(Int(ms.rounded()))) ms")
        return value
    }

    /// Findings on standard error (under --quiet too): at most `findingsPerCheck` of one check,
    /// then how many more, unless --verbose. --json's document lists them all.
    func findings(_ diagnostics: [Diagnostic], base: String = ".") {
        err.report(diagnostics, base: base, limitPerCheck: verbosity == .verbose ? nil : Self.findingsPerCheck)
    }

    /// How many findings of one check a command prints before it says how many more there are.
    static let findingsPerCheck = 20

    /// Text that is the command's result, on standard output.
    func data(_ text: String) { out.write(text) }

    /// The command's JSON document on standard output (docs/json.md), written in pieces as it
    /// is encoded (`JSONDocument.write`), not encoded whole first.
    func emit<T: Encodable>(_ document: T) { JSONDocument.write(document, to: out.write) }

    /// A progress bar on standard error when it is a terminal, not under --quiet or --json.
    func progressBar(_ label: String) -> ProgressBar? {
        ProgressBar(label: label, terminal: err, enabled: verbosity > .quiet && !json)
    }

    /// Runs a command's work and reports what stops it, with the shared exit statuses: the
    /// input has problems (1: findings on standard error), could not run (2: the error and its
    /// hint). Under --json, standard output gets the error document.
    func run(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as DiagnosticsError {
            fail(problems: error.diagnostics)
            throw Status.problems
        } catch let error as GalleyError {
            fail(error)
            throw Status.couldNotRun
        }
    }

    /// Reports an error that stops the command (exit 2 follows).
    func fail(_ error: GalleyError) {
        err.report(error)
        if json { emit(ErrorDocument(error)) }
    }

    /// Reports findings that stop the command (exit 1 follows).
    func fail(problems diagnostics: [Diagnostic], base: String = ".") {
        findings(diagnostics, base: base)
        if json {
            let errors = diagnostics.filter { $0.severity == .error }.count
            emit(ErrorDocument(problems: diagnostics, message: "the input has \(errors == 1 ? "1 error" : "\(errors) errors")"))
        }
    }
}

/// Exit statuses every command shares: 0 done, 1 the input has problems, 2 could not run.
enum Status {
    static let problems = ExitCode(1)
    static let couldNotRun = ExitCode(2)
}
