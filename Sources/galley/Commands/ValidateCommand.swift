import ArgumentParser
import Foundation
import GalleyKit
import GalleyCore
import GalleyStore

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

    @Option(help: "The report's format (--json is --format json).")
    var format: ReportFormat = .text

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

    @OptionGroup var output: OutputOptions

    /// `--list-checks --json`.
    struct CatalogDocument: Encodable {
        struct Entry: Encodable {
            var id: CheckID
            var group: String
            var severity: Severity
            var summary: String
            var explanation: String
        }
        var checks: [Entry]
    }

    func validate() throws {
        if !listChecks && paths.isEmpty {
            throw ValidationError("give at least one path to validate, e.g. `galley validate build/issue.zip`")
        }
    }

    func run() throws {
        let format = output.json ? .json : format
        let console = output.console(json: format == .json)
        if listChecks {
            if format == .json {
                return console.emit(CatalogDocument(checks: CheckCatalog.complete.map {
                    .init(id: $0.id, group: $0.group.rawValue, severity: $0.severity, summary: $0.summary, explanation: $0.explanation)
                }))
            }
            return console.data(markdown ? CheckCatalog.markdown(CheckCatalog.complete) : CheckCatalog.listing(CheckCatalog.complete))
        }
        var options = ValidationOptions()
        options.fullCheck = !quick
        try console.run {
            options.configuration = try ValidationConfiguration.resolve(
                configFile: config, ignored: ignored, from: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        }
        var run = console.timed("validated \(paths.count) path\(paths.count == 1 ? "" : "s")") {
            Validator(options: options).validate(paths: paths)
        }
        if strict { run = run.strict() }
        for failure in run.failures { console.err.report(failure) }
        switch format {
        case .text: console.data(console.out.textReport.render(run, summary: console.verbosity > .quiet))
        case .json: run.writeJSON(to: console.data)
        case .junit: console.data(run.junit())
        case .github: console.data(run.github())
        case .sarif: console.data(run.sarif())
        }
        if run.exitStatus != 0 { throw ExitCode(run.exitStatus) }
    }
}
