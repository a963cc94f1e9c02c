import GalleyCore

/// Findings as people read them: `path:line:col: severity id: message`, then `hint: ...`, the
/// form compilers use, so editors and terminals make the location clickable.
///
/// Colour is the caller's business: `paint` wraps a piece of text in a style (the CLI gives an
/// ANSI painter on a terminal and the identity elsewhere), so the library never looks at the
/// terminal or the environment.
public struct TextReport: Sendable {
    /// The styles a report asks for.
    public enum Style: Sendable {
        case location, error, warning, info, id, hint, failure
    }

    public var paint: @Sendable (String, Style) -> String

    public init(paint: @escaping @Sendable (String, Style) -> String = { text, _ in text }) {
        self.paint = paint
    }

    /// One finding: its line and, when it has one, the hint line. `base` is the folder its
    /// relative paths start from (see `relocate`).
    public func lines(_ diagnostic: Diagnostic, base: String) -> String {
        let location = diagnostic.location.map { Self.relocate($0, base: base) }
        var line = ""
        if let location { line += paint(location.description + ":", .location) + " " }
        let style: Style = switch diagnostic.severity {
        case .error: .error
        case .warning: .warning
        case .info: .info
        }
        line += paint(diagnostic.severity.rawValue, style) + " " + paint(diagnostic.id.rawValue, .id) + ": " + diagnostic.message
        if let jsonPath = location?.jsonPath { line += " " + paint("(at \(jsonPath))", .id) }
        line += "\n"
        if let hint = diagnostic.hint { line += "    " + paint("hint:", .hint) + " " + hint + "\n" }
        return line
    }

    /// Every finding, in the order given. With `limitPerCheck`, at most that many findings of
    /// one check, then a note for each check that had more saying how many were left out: a
    /// pack whose pictures libvips cannot read at all (a missing loader) said so once for every
    /// picture, 66,001 lines for 33,000 articles, where the first few tell what is wrong.
    public func render(_ diagnostics: [Diagnostic], base: String, limitPerCheck: Int? = nil) -> String {
        guard let limit = limitPerCheck else { return diagnostics.map { lines($0, base: base) }.joined() }
        var counts: [CheckID: Int] = [:]
        var order: [CheckID] = []
        var out = ""
        for diagnostic in diagnostics {
            let seen = counts[diagnostic.id, default: 0]
            if seen == 0 { order.append(diagnostic.id) }
            counts[diagnostic.id] = seen + 1
            if seen < limit { out += lines(diagnostic, base: base) }
        }
        for id in order {
            guard let count = counts[id], count > limit else { continue }
            out += paint("note:", .hint) + " \(count - limit) more " + paint(id.rawValue, .id)
                + " findings not shown (\(count) in all; --verbose shows them, --json lists them)\n"
        }
        return out
    }

    /// `error: what` and the hint, for an operation that could not run.
    public func render(_ error: GalleyError) -> String {
        var text = paint("error:", .error) + " \(error.description)\n"
        if let hint = error.hint { text += "    " + paint("hint:", .hint) + " \(hint)\n" }
        return text
    }

    /// A validate run: each input's findings grouped per file in line order (the order of
    /// findings on one line is kept), then the summary line (left out with `summary: false`).
    /// The failures (paths not checked at all) are the caller's to print, as errors.
    public func render(_ run: ValidationRun, summary showSummary: Bool = true) -> String {
        var out = ""
        for report in run.reports {
            let sorted = report.diagnostics.enumerated().sorted { a, b in
                let (pa, pb) = (a.element.location?.path ?? "", b.element.location?.path ?? "")
                if pa != pb { return pa < pb }
                let (la, lb) = (a.element.location?.line ?? 0, b.element.location?.line ?? 0)
                return la != lb ? la < lb : a.offset < b.offset
            }.map(\.element)
            out += render(sorted, base: ".")
        }
        guard showSummary else { return out }
        let failures = run.failures.count
        let summary = "\(run.reports.count) input\(run.reports.count == 1 ? "" : "s") checked: "
            + Self.summaryLine(errors: run.errors, warnings: run.warnings)
            + (run.infos > 0 ? ", \(run.infos) info" : "")
            + (failures > 0 ? "; \(failures) path\(failures == 1 ? "" : "s") could not be checked" : "")
        return out + (run.exitStatus != 0 ? paint(summary, .failure) : summary) + "\n"
    }

    /// Findings locate files relative to their input; show them as the user can open them.
    public static func relocate(_ location: SourceLocation, base: String) -> SourceLocation {
        var copy = location
        if location.path.isEmpty {
            copy.path = base
        } else if !location.path.hasPrefix("/") {
            copy.path = base == "." ? location.path : (base.hasSuffix("/") ? base : base + "/") + location.path
        }
        return copy
    }

    /// `2 errors, 1 warning`.
    public static func summaryLine(errors: Int, warnings: Int) -> String {
        "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
    }
}
