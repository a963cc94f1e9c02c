import Foundation
import GalleyCore
import GalleyKit

/// When to colour: `auto` on a terminal unless `NO_COLOR` is set or `TERM=dumb`; `always` and
/// `never` as asked (an explicit `--color always` wins over `NO_COLOR`).
enum ColorMode: String, CaseIterable, Sendable {
    case auto, always, never
}

/// Writing to stdout or stderr. What the lines say is the library's (`TextReport`); this only
/// decides the colours.
struct Terminal {
    let fd: Int32
    let isTTY: Bool
    let useColor: Bool

    static var standardError: Terminal { Terminal(fd: 2) }
    static var standardOutput: Terminal { Terminal(fd: 1) }

    init(fd: Int32, color: ColorMode = .auto, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.fd = fd
        isTTY = isatty(fd) == 1
        switch color {
        case .always: useColor = true
        case .never: useColor = false
        case .auto:
            let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
            useColor = isTTY && !noColor && environment["TERM"] != "dumb"
        }
    }

    func write(_ text: String) {
        let handle = fd == 1 ? FileHandle.standardOutput : FileHandle.standardError
        handle.write(Data(text.utf8))
    }

    /// The report writer for this stream: ANSI colours when colouring, plain text elsewhere.
    var textReport: TextReport {
        guard useColor else { return TextReport() }
        return TextReport { text, style in
            let code = switch style {
            case .location: "1"
            case .error, .failure: "31;1"
            case .warning: "33;1"
            case .info: "36"
            case .id: "2"
            case .hint: "32"
            }
            return "\u{1B}[\(code)m\(text)\u{1B}[0m"
        }
    }

    /// Prints findings, `path:line:col: severity id: message` and a hint line (at most
    /// `limitPerCheck` of one check, then how many more).
    func report(_ diagnostics: [Diagnostic], base: String, limitPerCheck: Int? = nil) {
        write(textReport.render(diagnostics, base: base, limitPerCheck: limitPerCheck))
    }

    /// `error: what` and the hint, for an operation that could not run.
    func report(_ error: GalleyError) {
        write(textReport.render(error))
    }
}
