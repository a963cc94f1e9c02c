import ArgumentParser
import Foundation
import GalleyCore
import GalleyKit
import GalleyStore

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import issue zips into the local issue store.",
        discussion: """
            Each zip is first checked as `galley validate` checks it: any error refuses it, with \
            the same messages, before anything is written. Older Linechef formats (legacy \
            article `metadata` without `meta`/`customMeta`, no `author_bio` or \
            `date_last_updated`) are imported with a warning (manifest.older-format). It is then extracted into a staging \
            folder, its rows written in one transaction, and its folder switched in; a process \
            killed at any moment leaves the old issue or the new one, complete.

            An issue already in the store is replaced only when the zip's last_updated is newer; \
            the same version is a no-op that says so; an older one is refused (exit 1). --force \
            replaces it anyway.
            """)

    @Argument(help: "Issue zips.", completion: .file(extensions: ["zip"]))
    var zips: [String]

    @OptionGroup var store: StoreOptions

    @Flag(help: "Replace the stored issue whatever its version.")
    var force = false

    func run() throws {
        var results: [ImportResult] = []
        var failed = false
        try reportingErrors {
            var opened: (any IssueStore)?
            for zip in zips {
                do {
                    // Refused zips never open (or create) the store.
                    let passed = try ImportGate.check(zip)
                    if !store.json { Terminal.standardError.report(passed.warnings, base: ".") }
                    if opened == nil { opened = try store.open(.write) }
                    guard let opened else { continue }
                    let bar = ProgressBar(label: "importing", enabled: !store.json)
                    let result = try opened.importZip(zip, force: force, gate: passed) { done, total in
                        bar?.update(done: done, total: max(total, 1), detail: formatBytes(done))
                    }
                    bar?.clear()
                    results.append(result)
                    if !store.json {
                        let what = result.status == .unchanged ? "already in the store (same last_updated); nothing changed"
                            : "\(result.status.rawValue): \(result.articles) articles, \(result.assets) assets"
                        Terminal.standardOutput.write("\(result.appleID): \(what)\n")
                    }
                } catch let error as DiagnosticsError {
                    Terminal.standardError.report(error.diagnostics, base: ".")
                    failed = true
                }
            }
        }
        if store.json { printJSON(results) }
        if failed { throw Status.problems }
    }
}
