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

    @Option(help: "The report's format.")
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

    func validate() throws {
        if !listChecks && paths.isEmpty {
            throw ValidationError("Give at least one path to validate, e.g. `galley validate dist/issue.zip`.")
        }
    }

    func run() throws {
        let out = Terminal.standardOutput
        if listChecks {
            out.write(markdown ? CheckCatalog.markdown(CheckCatalog.complete) : CheckCatalog.listing(CheckCatalog.complete))
            return
        }
        var options = ValidationOptions()
        options.fullCheck = !quick
        try reportingErrors {
            options.configuration = try ValidationConfiguration.resolve(
                configFile: config, ignored: ignored, from: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        }
        var (run, failures) = Validator(options: options).validate(paths: paths)
        if strict { run = run.strict() }
        for failure in failures { Terminal.standardError.report(failure) }
        switch format {
        case .text: out.write(out.textReport.render(run))
        case .json: out.write(run.json())
        case .junit: out.write(run.junit())
        case .github: out.write(run.github())
        case .sarif: out.write(run.sarif())
        }
        if !failures.isEmpty { throw Status.couldNotRun }
        if run.errors > 0 { throw Status.problems }
    }
}
