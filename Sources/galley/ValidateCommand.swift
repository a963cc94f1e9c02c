import ArgumentParser
import Foundation
import GalleyKit

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check issue sources, issue zips and latest.json files the way a CI step needs.",
        discussion: """
            Each PATH may be an issue source folder, an issue zip, a bare latest.json, or a folder \
            of zips; each is recognised by its content. Zips are checked from their central \
            directory first (bombs, zip slip, links, damage) and only then read, streaming, to \
            check every entry's CRC and size and the media's real types.

            Exit status: 0 when there are no errors, 1 when there are errors (or warnings under \
            --strict), 2 when galley could not run.

            Checks can be switched off or given another severity with --ignore and a .galley.yml \
            (the nearest one from the current folder upwards, or --config):
              checks:
                zip.name-profile: off
                manifest.unknown-key: warning

            Examples:
              galley validate dist/com.example.harbour.2026-01.zip
              galley validate Examples/winter-2026 dist/ --strict
              galley validate dist/ --format github
              galley validate --list-checks
            """)

    @Argument(help: "Issue source folders, zips, latest.json files or folders of zips.", completion: .file())
    var paths: [String] = []

    @Option(help: "Output: text, json, junit, github or sarif.")
    var format: String = "text"

    @Flag(help: "Fail (exit 1) on warnings too.")
    var strict = false

    @Option(name: .customLong("ignore"), help: ArgumentHelp("Switch a check off (repeatable).", valueName: "id"))
    var ignored: [String] = []

    @Option(help: ArgumentHelp("A .galley.yml to use instead of the nearest one.", valueName: "file"))
    var config: String?

    @Flag(help: "Check the container and manifest only, without inflating every entry.")
    var quick = false

    @Flag(help: "Print the catalogue of checks and exit.")
    var listChecks = false

    @Flag(help: .hidden)
    var markdown = false

    func run() throws {
        let stderr = Terminal.standardError
        if listChecks {
            Terminal.standardOutput.write(markdown ? CheckCatalog.markdown() : CheckCatalog.listing())
            return
        }
        guard let reportFormat = ReportFormat(rawValue: format) else {
            stderr.write("error: --format must be one of \(ReportFormat.allCases.map(\.rawValue).joined(separator: ", "))\n")
            throw Status.couldNotRun
        }
        guard !paths.isEmpty else {
            stderr.write("error: give at least one path to validate\n    hint: galley validate dist/issue.zip\n")
            throw Status.couldNotRun
        }
        var options = ValidationOptions()
        options.fullCheck = !quick
        do {
            let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            if let config {
                try options.configuration.load(URL(fileURLWithPath: config))
            } else if let found = ValidationConfiguration.find(from: cwd) {
                try options.configuration.load(found)
            }
            for id in ignored { try options.configuration.set(id, "off", source: "--ignore") }
        } catch let error as GalleyError {
            stderr.report(error)
            throw Status.couldNotRun
        }

        let validator = Validator(options: options)
        var reports: [InputReport] = []
        var failedToRun = false
        for path in paths {
            do {
                reports += try validator.validate(path: path)
            } catch let error as GalleyError {
                stderr.report(error)
                failedToRun = true
            }
        }
        let run = ValidationRun(reports: reports.map { report in
            var copy = report
            if report.kind == .source {
                copy.diagnostics = report.diagnostics.map { d in
                    var d = d
                    d.location = d.location.map { Terminal.relocate($0, base: report.path) }
                    return d
                }
            }
            return copy
        })
        let out = Terminal.standardOutput
        switch reportFormat {
        case .text:
            for report in run.reports {
                // Grouped per file, in line order; the order of findings on one line is kept.
                let sorted = report.diagnostics.enumerated().sorted { a, b in
                    let (pa, pb) = (a.element.location?.path ?? "", b.element.location?.path ?? "")
                    if pa != pb { return pa < pb }
                    let (la, lb) = (a.element.location?.line ?? 0, b.element.location?.line ?? 0)
                    return la != lb ? la < lb : a.offset < b.offset
                }.map(\.element)
                out.report(sorted, base: ".")
            }
            let summary = "\(run.reports.count) input\(run.reports.count == 1 ? "" : "s") checked: "
                + Terminal.summaryLine(errors: run.errors, warnings: run.warnings)
                + (run.infos > 0 ? ", \(run.infos) info" : "")
            out.write((run.errors > 0 ? out.paint(summary, "31;1") : summary) + "\n")
        case .json: out.write(run.json())
        case .junit: out.write(run.junit())
        case .github: out.write(run.github())
        case .sarif: out.write(run.sarif())
        }
        if failedToRun { throw Status.couldNotRun }
        if run.errors > 0 || (strict && run.warnings > 0) { throw Status.problems }
    }
}
