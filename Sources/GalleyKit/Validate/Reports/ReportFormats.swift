import Foundation
import GalleyCore
import GalleyFormats

/// The forms of a validation run's report: `text` for people (`TextReport`), the others for machines.
public enum ReportFormat: String, Sendable, CaseIterable {
    case text, json, junit, github, sarif
}

public struct ValidationRun: Sendable {
    public var reports: [InputReport]
    /// Paths that could not be checked at all (missing, unreadable, of no known kind): the run
    /// exits 2, and every format says why.
    public var failures: [GalleyError]

    public init(reports: [InputReport], failures: [GalleyError] = []) {
        self.reports = reports
        self.failures = failures
    }

    /// The exit status the run stands for: 2 when a path could not be checked, 1 when there
    /// are errors (warnings too, after `strict()`), else 0. Every format's counts agree with it.
    public var exitStatus: Int32 { !failures.isEmpty ? 2 : errors > 0 ? 1 : 0 }

    /// `--strict`: warnings fail the run, so every report counts them as errors (the JSON
    /// summary, JUnit's failures, annotation and SARIF levels then agree with the exit status).
    /// Each promoted finding's message says so.
    public func strict() -> ValidationRun {
        ValidationRun(reports: reports.map { report in
            var copy = report
            copy.diagnostics = report.diagnostics.map { diagnostic in
                guard diagnostic.severity == .warning else { return diagnostic }
                var promoted = diagnostic
                promoted.severity = .error
                promoted.message += " (a warning, an error under --strict)"
                return promoted
            }
            return copy
        }, failures: failures)
    }

    /// `path` relative to `directory` when it lies inside it (CI annotations and SARIF name files
    /// from the repository's root); other paths as they are.
    static func relative(_ path: String, to directory: String) -> String {
        guard path.hasPrefix("/") else { return path }
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        return path.hasPrefix(base) ? String(path.dropFirst(base.count)) : path
    }

    public var errors: Int { reports.reduce(0) { $0 + $1.errors } }
    public var warnings: Int { reports.reduce(0) { $0 + $1.warnings } }
    public var infos: Int { reports.reduce(0) { $0 + $1.diagnostics.filter { $0.severity == .info }.count } }

    // MARK: JSON (docs/json.md and docs/json/validate.schema.json)

    /// The report as one JSON document of Galley's contract, through `write` in pieces
    /// (`JSONDocument.write`): a report of thousands of findings is not encoded whole first.
    public func writeJSON(to write: (String) -> Void) { JSONDocument.write(JSONReport(run: self), to: write) }

    private struct JSONReport: Encodable {
        struct Tool: Encodable {
            var name = "galley"
            var version = Galley.version
        }

        struct Summary: Encodable {
            var inputs, errors, warnings, infos, failures: Int
            var exitStatus: Int32

            enum CodingKeys: String, CodingKey {
                case inputs, errors, warnings, infos, failures
                case exitStatus = "exit_status"
            }
        }

        struct Input: Encodable {
            var path: String
            var kind: String
            var errors, warnings: Int
            var diagnostics: [Diagnostic]
        }

        var tool = Tool()
        var summary: Summary
        var inputs: [Input]
        var failures: [ErrorDocument.Body]

        init(run: ValidationRun) {
            summary = Summary(
                inputs: run.reports.count, errors: run.errors, warnings: run.warnings, infos: run.infos,
                failures: run.failures.count, exitStatus: run.exitStatus)
            inputs = run.reports.map {
                Input(path: $0.path, kind: $0.kind.rawValue, errors: $0.errors, warnings: $0.warnings, diagnostics: $0.diagnostics)
            }
            failures = run.failures.map { ErrorDocument($0).error }
        }
    }

    // MARK: JUnit XML

    public func junit() -> String {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        let total = reports.reduce(0) { $0 + max(1, $1.diagnostics.count) } + failures.count
        xml += "<testsuites name=\"galley validate\" tests=\"\(total)\" failures=\"\(errors)\" errors=\"\(failures.count)\">\n"
        // A path that could not be checked is a JUnit error (the run could not test it), not a failure.
        for failure in failures {
            let path = failure.path ?? "galley validate"
            xml += "  <testsuite name=\"\(xmlEscape(path))\" tests=\"1\" failures=\"0\" errors=\"1\">\n"
            xml += "    <testcase classname=\"\(failure.id.rawValue)\" name=\"\(xmlEscape(path))\">\n"
            let body = xmlEscape(failure.message + (failure.hint.map { "\nhint: \($0)" } ?? ""))
            xml += "      <error type=\"\(failure.id.rawValue)\" message=\"\(xmlEscape(failure.message))\">\(body)</error>\n"
            xml += "    </testcase>\n  </testsuite>\n"
        }
        for report in reports {
            let tests = max(1, report.diagnostics.count)
            xml += "  <testsuite name=\"\(xmlEscape(report.path))\" tests=\"\(tests)\" failures=\"\(report.errors)\">\n"
            if report.diagnostics.isEmpty {
                xml += "    <testcase classname=\"\(xmlEscape(report.kind.rawValue))\" name=\"valid\"/>\n"
            }
            for d in report.diagnostics {
                let name = "\(d.id) \(d.location?.description ?? report.path)"
                xml += "    <testcase classname=\"\(xmlEscape(d.id.rawValue))\" name=\"\(xmlEscape(name))\">\n"
                let body = xmlEscape(d.message + (d.hint.map { "\nhint: \($0)" } ?? ""))
                switch d.severity {
                case .error:
                    xml += "      <failure type=\"\(xmlEscape(d.id.rawValue))\" message=\"\(xmlEscape(d.message))\">\(body)</failure>\n"
                case .warning, .info:
                    xml += "      <system-out>\(d.severity.rawValue): \(body)</system-out>\n"
                }
                xml += "    </testcase>\n"
            }
            xml += "  </testsuite>\n"
        }
        return xml + "</testsuites>\n"
    }

    // MARK: GitHub workflow commands

    public func github(workingDirectory: String = FileManager.default.currentDirectoryPath) -> String {
        var out = ""
        for failure in failures {
            var properties = ["title=\(githubProperty(failure.id.rawValue))"]
            if let path = failure.path { properties.insert("file=\(githubProperty(Self.relative(path, to: workingDirectory)))", at: 0) }
            let message = "could not check: " + failure.message + (failure.hint.map { "\nhint: \($0)" } ?? "")
            out += "::error \(properties.joined(separator: ","))::\(githubData(message))\n"
        }
        for report in reports {
            for d in report.diagnostics {
                let command = d.severity == .error ? "error" : d.severity == .warning ? "warning" : "notice"
                let file = Self.relative(filePart(d.location?.path ?? report.path), to: workingDirectory)
                var properties = ["file=\(githubProperty(file))"]
                if let line = d.location?.line { properties.append("line=\(line)") }
                if let column = d.location?.column { properties.append("col=\(column)") }
                properties.append("title=\(githubProperty(d.id.rawValue))")
                var message = d.message
                if let jsonPath = d.location?.jsonPath { message += " (at \(jsonPath))" }
                if let hint = d.hint { message += "\nhint: \(hint)" }
                out += "::\(command) \(properties.joined(separator: ","))::\(githubData(message))\n"
            }
        }
        // One line on every run, findings or none, so that a workflow's log shows the check ran.
        let findings = reports.flatMap(\.diagnostics)
        let errors = findings.filter { $0.severity == .error }.count, warnings = findings.filter { $0.severity == .warning }.count
        let inputs = reports.count + failures.count
        out += "::notice title=galley validate::\(inputs) \(inputs == 1 ? "input" : "inputs") checked: "
            + "\(errors) \(errors == 1 ? "error" : "errors"), \(warnings) \(warnings == 1 ? "warning" : "warnings")"
            + (failures.isEmpty ? "" : ", \(failures.count) not checked") + "\n"
        return out
    }

    // MARK: SARIF 2.1.0

    public func sarif(workingDirectory: String = FileManager.default.currentDirectoryPath) -> String {
        let used = Set(reports.flatMap { $0.diagnostics.map(\.id) })
        let rules: [JSONValue] = CheckCatalog.all.filter { used.contains($0.id) }.map { check in
            .object([
                ("id", .string(check.id.rawValue)),
                ("shortDescription", .object([("text", .string(check.summary))])),
                ("fullDescription", .object([("text", .string(check.explanation))])),
                ("defaultConfiguration", .object([("level", .string(sarifLevel(check.severity)))])),
                ("properties", .object([("group", .string(check.group.rawValue))])),
            ])
        }
        let results: [JSONValue] = reports.flatMap { report in
            report.diagnostics.map { d -> JSONValue in
                var region: [(String, JSONValue)] = []
                if let line = d.location?.line { region.append(("startLine", .int(line))) }
                if let column = d.location?.column { region.append(("startColumn", .int(column))) }
                let file = Self.relative(filePart(d.location?.path ?? report.path), to: workingDirectory)
                var artifact: [(String, JSONValue)] = [("uri", .string(Self.uriPath(file)))]
                if !file.hasPrefix("/") { artifact.append(("uriBaseId", .string("SRCROOT"))) }
                var physical: [(String, JSONValue)] = [("artifactLocation", .object(artifact))]
                if !region.isEmpty { physical.append(("region", .object(region))) }
                var text = d.message
                if let jsonPath = d.location?.jsonPath { text += " (at \(jsonPath))" }
                if let hint = d.hint { text += " Hint: \(hint)" }
                return .object([
                    ("ruleId", .string(d.id.rawValue)), ("level", .string(sarifLevel(d.severity))),
                    ("message", .object([("text", .string(text))])),
                    ("locations", .array([.object([("physicalLocation", .object(physical))])])),
                ])
            }
        }
        let document: JSONValue = .object([
            ("$schema", .string("https://json.schemastore.org/sarif-2.1.0.json")),
            ("version", .string("2.1.0")),
            ("runs", .array([.object([
                ("tool", .object([("driver", .object([
                    ("name", .string("galley")), ("version", .string(Galley.version)),
                    ("rules", .array(rules)),
                ]))])),
                ("originalUriBaseIds", .object([
                    ("SRCROOT", .object([("uri", .string("file://" + Self.uriPath(workingDirectory.hasSuffix("/") ? workingDirectory : workingDirectory + "/")))])),
                ])),
                ("invocations", .array([.object([
                    ("executionSuccessful", .bool(failures.isEmpty)),
                    ("toolExecutionNotifications", .array(failures.map { failure in
                        var members: [(String, JSONValue)] = [
                            ("level", .string("error")),
                            ("message", .object([("text", .string(failure.description + (failure.hint.map { " Hint: \($0)" } ?? "")))])),
                            ("descriptor", .object([("id", .string(failure.id.rawValue))])),
                        ]
                        if let path = failure.path {
                            let file = Self.relative(path, to: workingDirectory)
                            var artifact: [(String, JSONValue)] = [("uri", .string(Self.uriPath(file)))]
                            if !file.hasPrefix("/") { artifact.append(("uriBaseId", .string("SRCROOT"))) }
                            members.append(("locations", .array([.object([("physicalLocation", .object([("artifactLocation", .object(artifact))]))])])))
                        }
                        return .object(members)
                    })),
                ])])),
                ("results", .array(results)),
            ])])),
        ])
        return JSONWriter().encode(document) + "\n"
    }

    /// A file path as a URI path: percent-encoded where URIs need it, slashes kept.
    static func uriPath(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#[]")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }

    private func sarifLevel(_ severity: Severity) -> String {
        switch severity {
        case .error: "error"
        case .warning: "warning"
        case .info: "note"
        }
    }

    /// `x.zip!folder/latest.json` names a member of a zip; CI annotations point at the zip.
    private func filePart(_ path: String) -> String {
        path.split(separator: "!", maxSplits: 1).first.map(String.init) ?? path
    }
}

func xmlEscape(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&apos;"
        default:
            if scalar.value < 0x20 && scalar != "\n" && scalar != "\t" && scalar != "\r" {
                out += "\u{FFFD}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out
}

private func githubData(_ text: String) -> String {
    text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D")
        .replacingOccurrences(of: "\n", with: "%0A")
}

private func githubProperty(_ text: String) -> String {
    githubData(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
}

extension CheckCatalog {
    /// docs/checks.md for `checks` (the CLI passes `CheckCatalog.complete`): `galley validate --list-checks --markdown`.
    public static func markdown(_ checks: [Check]) -> String {
        var out = """
            # Checks

            Every check of `galley validate`, generated from the catalogue (each check is declared beside
            the code that emits it; `galley validate --list-checks --markdown` prints this page).
            Each has a stable id and a default severity; `--ignore ID` or `.galley.yml` changes them
            (see ci.md). Every example below is run by the test suite.

            The manifest examples ("article without `title`", "issue `\"publish_date\": …`") change
            one key of this template, a valid latest.json:

            ```json
            \(JSONWriter().encode(CheckExample.template))
            ```

            """
        func describe(_ example: CheckExample) -> String {
            example == CheckExample.validManifest ? "the template" : example.description
        }
        for group in Check.Group.allCases {
            out += "\n## \(group.rawValue.capitalized)\n"
            for check in checks where check.group == group {
                out += "\n### `\(check.id)` (\(check.severity.rawValue))\n\n\(check.summary) \(check.explanation)\n\n"
                out += check.triggering.map { "- Triggers: \(describe($0))\n" }.joined()
                out += check.clean.map { "- Clean: \(describe($0))\n" }.joined()
            }
        }
        return out
    }

    /// One line per check: id, severity, summary.
    public static func listing(_ checks: [Check]) -> String {
        let width = checks.map(\.id.rawValue.count).max() ?? 0
        return checks.map { check -> String in
            let id = check.id.rawValue.padding(toLength: width, withPad: " ", startingAt: 0)
            let severity = check.severity.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
            return id + "  " + severity + "  " + check.summary
        }.joined(separator: "\n") + "\n"
    }
}

extension ValidationRun {
    /// The run with each source folder's findings located relative to the working directory.
    public func relocatingSources() -> ValidationRun {
        ValidationRun(reports: reports.map { report in
            guard report.kind == .source else { return report }
            var copy = report
            copy.diagnostics = report.diagnostics.map { diagnostic in
                var moved = diagnostic
                moved.location = diagnostic.location.map { TextReport.relocate($0, base: report.path) }
                return moved
            }
            return copy
        }, failures: failures)
    }
}
