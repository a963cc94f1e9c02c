import ArgumentParser
import Foundation
import GalleyCore
import GalleyKit
import GalleyStore
import GalleyStoreBackends

struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store", abstract: "Check, clean or copy the issue store.", subcommands: [Check.self, GC.self, Copy.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check", abstract: "Database integrity, every file present with its size and checksum, no orphans (exit 1 on problems).",
            discussion: "With --json: {\"integrity\", \"issues\", \"files\", \"problems\": [...]} (docs/json/store-check.schema.json); exit 1 exactly when problems is not empty.")
        @OptionGroup var store: StoreOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let console = output.console
            var problems = false
            try console.run {
                let check = try console.timed("check") { try store.open().check() }
                problems = !check.problems.isEmpty
                if output.json { return console.emit(check) }
                for problem in check.problems { console.data("problem: \(problem)\n") }
                console.data("\(check.issues) issues, \(check.files) files, database \(check.integrity): "
                    + (problems ? "\(check.problems.count) problems\n" : "all good\n"))
            }
            if problems { throw Status.problems }
        }
    }

    struct GC: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gc", abstract: "Remove what interrupted imports left behind.",
            discussion: "With --json: {\"removed\": [...paths...]} (docs/json/store-gc.schema.json).")
        @OptionGroup var store: StoreOptions
        @OptionGroup var output: OutputOptions

        struct Document: Encodable { var removed: [String] }

        func run() throws {
            let console = output.console
            try console.run {
                let removed = try store.open(.write).collectGarbage()
                if output.json { return console.emit(Document(removed: removed)) }
                for item in removed { console.data("removed \(item)\n") }
                console.status("\(removed.count) leftovers removed from \(store.named)")
            }
        }
    }

    struct Copy: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "copy", abstract: "Copy every issue, feed version and independent article into another store (either backend).",
            discussion: """
                Each issue goes through the target's full import from the zip the source kept, oldest first; feed versions \
                never go lower than the source's; independent articles and what sync recorded follow. The target is then \
                checked as `galley store check` does: exit 1 when it has problems.

                  galley store copy --from ~/.local/share/galley --to 'postgres://galley@db.internal:5432/galley?blobs=/srv/galley-blobs'

                With --json: {"from", "to", "issues": [{"apple_id", "status", "version"}], "independent_articles", \
                "followed_feeds", "refused_packages", "check"} (docs/json/store-copy.schema.json).
                """)
        @Option(help: ArgumentHelp("The store to copy: a folder or a postgres:// address.", valueName: "store"), completion: .directory)
        var from: String
        @Option(help: ArgumentHelp("The store to copy into (created when missing): a folder or a postgres:// address.", valueName: "store"),
                completion: .directory)
        var to: String
        @OptionGroup var output: OutputOptions

        func validate() throws {
            let environment = ProcessInfo.processInfo.environment
            if try StoreLocation.resolve(given: from, environment: environment) == StoreLocation.resolve(given: to, environment: environment) {
                throw ValidationError("--from and --to name the same store")
            }
        }

        func run() throws {
            let console = output.console
            var problems = false
            try console.run {
                let environment = ProcessInfo.processInfo.environment
                let (source, target) = (try StoreLocation.resolve(given: from, environment: environment),
                                        try StoreLocation.resolve(given: to, environment: environment))
                let names = (source.display, target.display)
                let stores = StoreBackends(environment: environment)
                let opened = try stores.open(source, access: .read)
                let bar = console.progressBar("copying")
                let report = try StoreCopy.copy(from: opened, to: { try stores.open(target, access: .create) }, names: names) { done, total, issue in
                    bar?.update(done: Int64(done), total: Int64(max(total, 1)), detail: issue)
                }
                bar?.clear()
                problems = !report.check.problems.isEmpty
                if output.json { return console.emit(report) }
                for issue in report.issues { console.data("\(issue.appleID): \(issue.status.rawValue), feed version \(issue.version)\n") }
                for problem in report.check.problems { console.data("problem: \(problem)\n") }
                for note in report.notes { console.note("note: \(note)") }
                console.status("copied \(report.issues.count) issues, \(report.independentArticles) independent articles, "
                    + "\(report.followedFeeds) followed feeds and \(report.refusedPackages) refused packages to \(names.1)"
                    + (problems ? "; the target has \(report.check.problems.count) problems" : "; the target checks clean"))
            }
            if problems { throw Status.problems }
        }
    }
}
