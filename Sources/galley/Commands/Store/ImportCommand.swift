import ArgumentParser
import Foundation
import GalleyCore
import GalleyFormats
import GalleyKit
import GalleyStore

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import issue zips into the local issue store.",
        discussion: """
            Each zip gets every check of `galley validate`: any error refuses it, with the same \
            messages, and leaves the store as it was. The container checks come first (a zip \
            they refuse never opens the store); latest.json is then checked while the files are \
            extracted into a staging folder beside the store's issues. Older Linechef formats \
            (legacy article `metadata` without `meta`/`customMeta`, no `author_bio` or \
            `date_last_updated`) are imported with a warning (manifest.older-format). Once every \
            check has passed, its rows are written in one transaction and its folder switched \
            in; a process killed at any moment leaves the old issue or the new one, complete.

            An issue already in the store is replaced only when the zip's last_updated is newer; \
            the same version with the same content is a no-op that says so; the same version with \
            other content (an edited issue packed without bumping last_updated: see pack --bump) \
            and an older one are refused (exit 1). --force replaces it anyway.

            A folder stands for the zips in it, in name order, as for galley validate.

            With --json, standard output is {"imports": [...]} with an object per zip: what \
            was imported (status imported, replaced or unchanged), status refused with the \
            findings that refused it, or status failed with the error that stopped it \
            (docs/json/import.schema.json). The exit status is 0 when every zip was imported \
            or unchanged, 1 when one was refused, 2 when one failed.

            Independent articles (articles with no issue): --articles FILE.json merges the \
            file's articles ({"articles": [{"global_id", "title", ...}]}, or a foreign feed read \
            through --key-map, docs/key-maps.md) by global id: new ones added, changed ones \
            updated, the same ones untouched, the store's others kept. A bad item is skipped and \
            reported (exit 1), the others merged. List them with galley articles --independent.
            With --json: {"added", "updated", "unchanged", "skipped"} \
            (docs/json/import-articles.schema.json).

            Examples:
              galley import dist/com.example.harbour.2026-01.zip --store store
              galley import --articles news.json --store store
              galley import --articles posts.json --key-map Examples/key-maps/wordpress-posts.yaml --store store
            """)

    @Argument(help: "Issue zips, or folders of them.", completion: .file(extensions: ["zip"]))
    var zips: [String] = []

    @Option(help: ArgumentHelp("Merge the independent articles of this JSON file instead of importing zips.", valueName: "file"),
            completion: .file(extensions: ["json"]))
    var articles: String?

    @Option(help: ArgumentHelp("Read --articles as a foreign feed (JSON, RSS or Atom) through this key map (docs/key-maps.md).", valueName: "file"),
            completion: .file(extensions: ["yaml", "yml"]))
    var keyMap: String?

    @OptionGroup var store: StoreOptions
    @OptionGroup var output: OutputOptions

    @Flag(help: "Replace the stored issue whatever its version.")
    var force = false

    /// One zip's entry in `--json`: what the import did, why the zip was refused, or what
    /// stopped it.
    enum Outcome: Encodable {
        case done(ImportResult)
        case refused(path: String, diagnostics: [Diagnostic])
        case failed(path: String, error: GalleyError)

        private enum CodingKeys: String, CodingKey { case path, status, diagnostics, error }

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .done(let result): try result.encode(to: encoder)
            case .refused(let path, let diagnostics):
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(path, forKey: .path)
                try container.encode("refused", forKey: .status)
                try container.encode(diagnostics, forKey: .diagnostics)
            case .failed(let path, let error):
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(path, forKey: .path)
                try container.encode("failed", forKey: .status)
                try container.encode(error, forKey: .error)
            }
        }
    }

    struct Document: Encodable { var imports: [Outcome] }

    func validate() throws {
        if articles != nil, !zips.isEmpty { throw ValidationError("give zips or --articles FILE, not both") }
        if articles == nil, zips.isEmpty { throw ValidationError("give the issue zips to import (or --articles FILE.json)") }
        if keyMap != nil, articles == nil { throw ValidationError("--key-map reads an --articles file: give one") }
    }

    func run() throws {
        if let articles { return try importArticles(articles) }
        let console = output.console
        var results: [Outcome] = []
        var refused = false
        var failed = false
        var opened: (any IssueStore)?
        // The first folder of the store's path that is not there yet, if any: what this command
        // creates, and removes again when it imported nothing.
        var created: URL?
        var missing = try store.location.localFolder
        while let folder = missing, FileStatus(folder.path) == nil, folder.pathComponents.count > 1 {
            created = folder
            missing = folder.deletingLastPathComponent()
        }
        for zip in ImportGate.zips(zips) {
            do {
                // Zips the container checks refuse never open (or create) the store; latest.json
                // is checked beside the extraction, into staging.
                let job = try console.timed("\(zip): container checked") { try ImportJob.open(zip).withRowsBeside(.whenLarge) }
                console.findings(job.warnings)
                if opened == nil { opened = try store.open(.create) }
                guard let opened else { continue }
                let bar = console.progressBar("importing")
                let result = try console.timed("\(zip): checked, extracted and written") {
                    defer { bar?.clear() }
                    return try opened.importZip(job.forcing(force).reporting { done, total in
                        bar?.update(done: done, total: max(total, 1), detail: formatBytes(done))
                    })
                }
                results.append(.done(result))
                // The container's warnings were shown above; these are the rest of the checks'.
                console.findings(Array(result.warnings.dropFirst(job.warnings.count)))
                let what = result.status == .unchanged ? "already in the store (same last_updated); nothing changed"
                    : "\(result.status.rawValue): \(result.articles) \(result.articles == 1 ? "article" : "articles"), "
                        + "\(result.assets) \(result.assets == 1 ? "asset" : "assets")"
                console.status("\(result.appleID): \(what)")
                if result.rowsWrittenBesideThePass {
                    console.detail("\(result.appleID): the articles' rows were written beside the extraction (latest.json is large against its files)")
                }
                if let withheld = result.package?.withheld {
                    console.status("\(result.appleID): kept out of `galley serve`'s package feed: \(withheld); pack it again with this Galley to serve it")
                }
            } catch let error as DiagnosticsError {
                results.append(.refused(path: zip, diagnostics: error.diagnostics))
                console.findings(error.diagnostics)
                refused = true
            } catch let error as GalleyError {
                results.append(.failed(path: zip, error: error))
                console.err.report(error)
                failed = true
            }
        }
        // A zip refused by the content checks was refused with the store open (import compares
        // versions first): a store this command created for it, still empty, goes again.
        let done = results.compactMap { if case .done(let result) = $0 { result } else { nil } }
        if let created, done.isEmpty, (try? opened?.issues().isEmpty) == true {
            opened = nil  // its connections close before its folder goes
            try? FileManager.default.removeItem(at: created)
        }
        // A load of many issues: the next queries are planned for what the store now holds.
        if done.count(where: { $0.status != .unchanged }) > 1 {
            // The imports stand whatever happens here: say so, and leave the exit status to them.
            do { try opened?.settleAfterLoad() } catch let error as GalleyError {
                console.note("note: the imports are done, but the store's statistics were not brought up to date (\(error.message)); the database's own maintenance does it within minutes")
            }
        }
        if output.json { console.emit(Document(imports: results)) }
        if !done.isEmpty { console.status("into \(store.named)") }
        if failed { throw Status.couldNotRun }
        if refused { throw Status.problems }
    }

    /// `--articles FILE`: merges independent articles.
    func importArticles(_ file: String) throws {
        let console = output.console
        var skipped = false
        try console.run {
            let map = try keyMap.map { try KeyMap(contentsOf: $0) }
            // The file is read and mapped first: a bad one never creates or opens the store.
            let articles = try ArticlesFile(path: file, map: map)
            let summary = try store.open(.create).importArticles(articles)
            skipped = !summary.skipped.isEmpty
            for item in summary.skipped where !output.json { console.err.report(ArticlesSummary.error(item, source: file)) }
            for item in summary.sanitized where !output.json { console.note(ArticlesSummary.note(item, source: file)) }
            if output.json { return console.emit(summary) }
            console.status("\(file) into \(store.named): \(summary.added.count) added, \(summary.updated.count) updated, \(summary.unchanged) unchanged"
                           + (summary.skipped.isEmpty ? "" : ", \(summary.skipped.count) skipped")
                           + (summary.sanitized.isEmpty ? "" : ", \(summary.sanitized.count) sanitized"))
        }
        if skipped { throw Status.problems }
    }
}
