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
            the same version with the same content is a no-op that says so; the same version with \
            other content (an edited issue packed without bumping last_updated: see pack --bump) \
            and an older one are refused (exit 1). --force replaces it anyway.

            A folder stands for the zips in it, in name order, as for galley validate.

            With --json, standard output is one array with an object per zip: what was \
            imported (status imported, replaced or unchanged), or status refused with the \
            findings that refused it.
            """)

    @Argument(help: "Issue zips, or folders of them.", completion: .file(extensions: ["zip"]))
    var zips: [String]

    @OptionGroup var store: StoreOptions

    @Flag(help: "Replace the stored issue whatever its version.")
    var force = false

    /// One zip's line in `--json`: what the import did, or why the zip was refused.
    enum Outcome: Encodable {
        case done(ImportResult)
        case refused(path: String, diagnostics: [Diagnostic])

        private enum CodingKeys: String, CodingKey { case path, status, diagnostics }

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .done(let result): try result.encode(to: encoder)
            case .refused(let path, let diagnostics):
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(path, forKey: .path)
                try container.encode("refused", forKey: .status)
                try container.encode(diagnostics, forKey: .diagnostics)
            }
        }
    }

    func run() throws {
        var results: [Outcome] = []
        var failed = false
        try reportingErrors {
            var opened: (any IssueStore)?
            for zip in ImportGate.zips(zips) {
                do {
                    // Refused zips never open (or create) the store.
                    let passed = try ImportGate.check(zip)
                    if !store.json { Terminal.standardError.report(passed.warnings, base: ".") }
                    if opened == nil { opened = try store.open(.create) }
                    guard let opened else { continue }
                    let bar = ProgressBar(label: "importing", enabled: !store.json)
                    let result = try opened.importZip(zip, force: force, gate: passed) { done, total in
                        bar?.update(done: done, total: max(total, 1), detail: formatBytes(done))
                    }
                    bar?.clear()
                    results.append(.done(result))
                    if !store.json {
                        let what = result.status == .unchanged ? "already in the store (same last_updated); nothing changed"
                            : "\(result.status.rawValue): \(result.articles) articles, \(result.assets) assets"
                        Terminal.standardOutput.write("\(result.appleID): \(what)\n")
                    }
                } catch let error as DiagnosticsError {
                    if store.json {
                        results.append(.refused(path: zip, diagnostics: error.diagnostics))
                    } else {
                        Terminal.standardError.report(error.diagnostics, base: ".")
                    }
                    failed = true
                }
            }
        }
        if store.json { printJSON(results) }
        if failed { throw Status.problems }
    }
}
