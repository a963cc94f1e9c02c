import Foundation
import Glibc
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

    /// Writes all of `text`, with write(2) rather than `FileHandle.write`, which traps on a
    /// failed write. A reader that went away (`galley search … | head -3`) ends the process as
    /// it ends any Unix tool, by SIGPIPE (exit status 141 to the shell), whether or not the
    /// signal was ignored: swift-nio ignores it for the whole process once a PostgreSQL store or
    /// a server starts, so the write fails with EPIPE instead. Standard error's failures are
    /// dropped: there is nowhere left to say them.
    func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.write(fd, base + offset, buffer.count - offset)
            }
            if written > 0 {
                offset += written
                continue
            }
            if written < 0, errno == EINTR { continue }
            if fd == 1, written < 0, errno == EPIPE { Self.endByBrokenPipe() }
            return
        }
    }

    /// Ends the process as the default SIGPIPE action would.
    static func endByBrokenPipe() -> Never {
        signal(SIGPIPE, SIG_DFL)
        raise(SIGPIPE)
        exit(128 + SIGPIPE)
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
