import ArgumentParser
import Foundation
import GalleyKit
import GalleyCore

struct PackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pack",
        abstract: "Pack an issue source folder into a Dumpling issue zip.",
        discussion: """
            SOURCE is a folder with issue.yaml (or issue.json) and articles/<slug>/article.md \
            (or article.html); docs/source-format.md describes it. The zip holds one folder named \
            after the issue's apple_id, with latest.json first and the media files beside it.

            The same source always gives the same bytes: entry times come from \
            SOURCE_DATE_EPOCH when it is set, else from the issue's last_updated date, and \
            neither the time zone, the locale nor file order matter.

            Pack never writes a zip that galley validate would refuse: it checks names, \
            sizes and compression ratios against the container limits of the nearest \
            .galley.yml (as validate does) and reports the same check ids.

            Examples:
              galley pack Examples/winter-2026
              galley pack Examples/winter-2026 --output dist/ --force
              galley pack Examples/winter-2026 --output out/issue.zip --json
              galley pack Examples/winter-2026 --output dist/ --force --thumbnails centre

            Every picture gets a square 350x350 JPEG thumbnail (crop_350_350) made with \
            libvips, and a video its poster's; a thumbnail: given in the source is used as it is.

            With --json, standard output is the summary (path, bytes, sha256, apple_id, \
            last_updated, counts, warnings), or {"error": ...} with the findings that stopped \
            the pack (docs/json/pack.schema.json).
            """)

    @Argument(help: "The issue source folder.", completion: .directory)
    var source: String

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp(
        "A folder to write <apple_id>.zip into, or a path ending in .zip. Default: the current folder.",
        valueName: "path"))
    var outputPath: String?

    @Flag(help: "Replace an existing zip at the output path.")
    var force = false

    @Flag(help: "Pack an issue over 4 GiB or 65,535 files using Zip64 (Dumpling cannot read it).")
    var allowZip64 = false

    @Option(help: ArgumentHelp(
        "How each picture's 350x350 thumbnail (crop_350_350) is made: cut around its most interesting part, from its middle, or none (the picture itself). A thumbnail: given in the source always wins.",
        valueName: "crop"))
    var thumbnails: ThumbnailMode = .attention

    @OptionGroup var output: OutputOptions

    @Flag(help: "Set the issue's last_updated to now (to the second) instead of the source's, so that stores and apps take an edited issue as a new version. The zip then differs from run to run.")
    var bump = false

    func run() throws {
        let console = output.console
        var options = PackOptions(
            source: URL(fileURLWithPath: source), output: outputPath.map { URL(fileURLWithPath: $0) })
        options.force = force
        options.allowZip64 = allowZip64
        options.thumbnails = thumbnails
        if bump { options.lastUpdated = Int64(Date().timeIntervalSince1970) * 1000 }
        try console.run {
            options.configuration = try ValidationConfiguration.resolve(
                configFile: nil, ignored: [], from: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
            if let epoch = ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"], !epoch.isEmpty {
                guard let seconds = Int64(epoch), seconds >= 0 else {
                    throw GalleyError("SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, not `\(epoch)`",
                                      id: .usage, hint: "Unset it, or set it to `date +%s` of the time the zip should carry.")
                }
                options.sourceDateEpoch = seconds
            }
        }
        // Thumbnails: libvips's buffers, taken and freed on many threads, share one heap.
        if thumbnails != .none { FreedMemory.oneHeap() }
        let interrupts = Interrupts.onInterrupt { [options] in options.removeTemporaries() }
        defer { interrupts.end() }
        let bar = console.progressBar("packing")
        try console.run {
            do {
                let summary = try console.timed("packed") {
                    // The bar goes before anything else is printed, whatever the pack's end.
                    defer { bar?.clear() }
                    // Before anything is reported: an interrupt's cleanup may have made the
                    // pack fail, and then its exit (128 + signal) is the one to see.
                    defer { interrupts.end() }
                    return try Packer().pack(options) { state in
                        switch state.phase {
                        case .counting:
                            bar?.update(
                                done: Int64(state.articlesDone), total: Int64(state.articlesTotal),
                                detail: "counting files, article \(state.articlesDone)/\(state.articlesTotal)")
                        case .articles:
                            bar?.update(
                                done: Int64(state.articlesDone), total: Int64(state.articlesTotal),
                                detail: "article \(state.articlesDone)/\(state.articlesTotal)")
                        case .zip:
                            bar?.update(
                                done: state.bytesDone, total: state.bytesTotal,
                                detail: "\(state.entriesDone)/\(state.entriesTotal) files, \(formatBytes(state.bytesDone))")
                        }
                    }
                }
                var relocatedSummary = summary
                relocatedSummary.warnings = summary.warnings.map { relocated($0) }
                console.findings(relocatedSummary.warnings)
                if output.json { return console.emit(relocatedSummary) }
                console.detail("sha256 \(summary.sha256 ?? "-"), \(summary.entries) entries, last_updated \(summary.lastUpdated)")
                console.status(
                    "packed \(summary.path) (\(summary.articles) articles, \(summary.assets) assets, \(formatBytes(summary.bytes)))")
            } catch let error as DiagnosticsError {
                // Findings point at files as the user named the source.
                let diagnostics = error.diagnostics.map { relocated($0) }
                console.fail(problems: diagnostics)
                let errors = diagnostics.filter { $0.severity == .error }.count
                console.note("pack failed: \(TextReport.summaryLine(errors: errors, warnings: diagnostics.count - errors))")
                throw Status.problems
            }
        }
    }

    private func relocated(_ diagnostic: Diagnostic) -> Diagnostic {
        var copy = diagnostic
        copy.location = diagnostic.location.map { TextReport.relocate($0, base: source) }
        return copy
    }
}
