import Foundation
import GalleyKit

/// Writing to stdout and stderr: colour and progress only on a terminal, `NO_COLOR` honoured.
struct Terminal {
    let fd: Int32
    let isTTY: Bool
    let useColor: Bool

    static var standardError: Terminal { Terminal(fd: 2) }
    static var standardOutput: Terminal { Terminal(fd: 1) }

    init(fd: Int32) {
        self.fd = fd
        isTTY = isatty(fd) == 1
        let environment = ProcessInfo.processInfo.environment
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        useColor = isTTY && !noColor && environment["TERM"] != "dumb"
    }

    func write(_ text: String) {
        let handle = fd == 1 ? FileHandle.standardOutput : FileHandle.standardError
        handle.write(Data(text.utf8))
    }

    func paint(_ text: String, _ code: String) -> String {
        useColor ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// Prints findings grouped by file, `path:line:col: severity id: message` and a hint line.
    func report(_ diagnostics: [Diagnostic], base: String) {
        var lastFile: String?
        for diagnostic in diagnostics {
            let location = diagnostic.location.map { Self.relocate($0, base: base) }
            if let file = location?.path, file != lastFile {
                lastFile = file
            }
            var line = ""
            if let location { line += paint(location.description + ":", "1") + " " }
            let severity = diagnostic.severity.rawValue
            let color = diagnostic.severity == .error ? "31;1" : diagnostic.severity == .warning ? "33;1" : "36"
            line += paint(severity, color) + " " + paint(diagnostic.id, "2") + ": " + diagnostic.message
            if let jsonPath = location?.jsonPath { line += " " + paint("(at \(jsonPath))", "2") }
            write(line + "\n")
            if let hint = diagnostic.hint { write("    " + paint("hint:", "32") + " " + hint + "\n") }
        }
    }

    /// `error: what` and the hint, for an operation that could not run.
    func report(_ error: GalleyError) {
        write(paint("error:", "31;1") + " \(error.description)\n")
        if let hint = error.hint { write("    " + paint("hint:", "32") + " \(hint)\n") }
    }

    /// Diagnostics locate files relative to the input; show them as the user can open them.
    static func relocate(_ location: SourceLocation, base: String) -> SourceLocation {
        var copy = location
        if location.path.isEmpty {
            copy.path = base
        } else if !location.path.hasPrefix("/") {
            copy.path = base == "." ? location.path : (base.hasSuffix("/") ? base : base + "/") + location.path
        }
        return copy
    }

    static func summaryLine(errors: Int, warnings: Int) -> String {
        "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
    }
}

/// A one-line progress bar on a terminal, redrawn at most ten times a second.
final class ProgressBar {
    private let terminal: Terminal
    private let label: String
    private var lastDraw: UInt64 = 0
    private var drawn = false

    init?(label: String, terminal: Terminal = .standardError, enabled: Bool) {
        guard enabled, terminal.isTTY else { return nil }
        self.terminal = terminal
        self.label = label
    }

    func update(done: Int64, total: Int64, detail: String) {
        let now = DispatchTime.now().uptimeNanoseconds
        guard now - lastDraw > 100_000_000 || done >= total else { return }
        lastDraw = now
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        terminal.write("\r\u{1B}[2K\(label) \(bar) \(Int(fraction * 100))% \(detail)")
        drawn = true
    }

    func clear() {
        if drawn { terminal.write("\r\u{1B}[2K") }
    }
}

func formatBytes(_ bytes: Int64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1000 && unit < units.count - 1 {
        value /= 1000
        unit += 1
    }
    return unit == 0 ? "\(bytes) B" : String(format: "%.1f", value) + " " + units[unit]
}

/// JSON for `--json` output: sorted keys, `/` unescaped, one document per run.
func printJSON<T: Encodable>(_ value: T) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return }
    Terminal.standardOutput.write(String(decoding: data, as: UTF8.self) + "\n")
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
