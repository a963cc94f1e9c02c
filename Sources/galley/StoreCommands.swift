import ArgumentParser
import Foundation
import GalleyKit

/// `--store` for every command that reads or writes the store.
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The issue store folder (default: $GALLEY_STORE, else $XDG_DATA_HOME/galley, else ~/.local/share/galley).",
        valueName: "dir"))
    var store: String?

    @Flag(help: "Print JSON on standard output.")
    var json = false

    /// Queries open the store read-only; import, delete and gc for writing.
    func open(_ access: IssueStore.Access = .read) throws -> IssueStore {
        try IssueStore(at: IssueStore.location(given: store, environment: ProcessInfo.processInfo.environment), access: access)
    }
}

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
            var opened: IssueStore?
            for zip in zips {
                do {
                    // Refused zips never open (or create) the store.
                    let warnings = try IssueStore.checkForImport(zip)
                    if !store.json { Terminal.standardError.report(warnings, base: ".") }
                    if opened == nil { opened = try store.open(.write) }
                    guard let opened else { continue }
                    let bar = ProgressBar(label: "importing", enabled: !store.json)
                    var result = try opened.importZip(zip, force: force, checked: true) { done, total in
                        bar?.update(done: done, total: max(total, 1), detail: formatBytes(done))
                    }
                    bar?.clear()
                    result.warnings = warnings
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

struct IssuesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issues", abstract: "List the store's issues, newest first.")

    @Flag(help: "Only the newest issue.")
    var newest = false
    @Option(help: ArgumentHelp("Only issues published before this one, nearest first.", valueName: "id"))
    var olderThan: String?
    @Option(help: ArgumentHelp("Only issues published after this one, nearest first.", valueName: "id"))
    var newerThan: String?

    @OptionGroup var store: StoreOptions

    func run() throws {
        try reportingErrors {
            let opened = try store.open()
            var issues: [StoredIssue]
            if let olderThan {
                issues = try opened.issues(relativeTo: olderThan, older: true)
            } else if let newerThan {
                issues = try opened.issues(relativeTo: newerThan, older: false)
            } else {
                issues = try opened.issues()
            }
            if newest { issues = Array(issues.prefix(1)) }
            if store.json { return printJSON(issues) }
            for issue in issues {
                Terminal.standardOutput.write("\(issue.publishDate)  \(issue.appleID)  \(issue.title) (\(issue.articles) articles)\n")
            }
        }
    }
}

struct IssueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issue", abstract: "Show one issue.", subcommands: [Show.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "An issue (by global id or apple_id) with its articles in order.")

        @Argument(help: "The issue's global id or apple_id.")
        var id: String

        @OptionGroup var store: StoreOptions

        struct Output: Encodable {
            var issue: StoredIssue
            var articles: [StoredArticle]
        }

        func run() throws {
            try reportingErrors {
                let (issue, articles) = try store.open().issue(id)
                if store.json { return printJSON(Output(issue: issue, articles: articles)) }
                let out = Terminal.standardOutput
                out.write("\(issue.title)\n\(issue.appleID) · \(issue.globalID) · \(issue.displayDate) · updated \(issue.lastUpdated)\n\n")
                for article in articles {
                    out.write("\(article.placement). \(article.title)\(article.featured ? " ★" : "")  [\(article.type)] \(article.globalID)\n")
                }
            }
        }
    }
}

struct ArticlesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "articles", abstract: "List articles, in issue order (or newest first with --by-date).")

    @Option(help: "Only this issue (global id or apple_id); an unknown issue is an error.")
    var issue: String?
    @Option(help: "Only this type.")
    var type: String?
    @Option(help: "Leave out this type.")
    var excludeType: String?
    @Flag(help: "Only featured articles.")
    var featured = false
    @Option(help: "Only articles with this keyword (a whole keyword, not a substring).")
    var keyword: String?
    @Flag(help: "Newest first instead of issue order.")
    var byDate = false
    @Option(help: "At most this many.")
    var limit: Int?
    @Option(help: "With --limit: the page, from 0.")
    var page = 0

    @OptionGroup var store: StoreOptions

    func run() throws {
        try reportingErrors {
            var filter = ArticleFilter()
            filter.issue = issue
            filter.type = type
            filter.excludeType = excludeType
            filter.featured = featured
            filter.keyword = keyword
            filter.byDate = byDate
            filter.limit = limit
            filter.page = page
            let articles = try store.open().articles(filter)
            if store.json { return printJSON(articles) }
            for article in articles {
                Terminal.standardOutput.write("\(article.globalID)  \(article.title)  [\(article.type)]\n")
            }
        }
    }
}

struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search", abstract: "Full-text search over titles, deks, keywords and bodies, best first.",
        discussion: """
            Every word must match, as the start of a word ("harb" finds "harbour"), in any case \
            and with or without accents. Results are ranked by BM25: a match in the title weighs \
            most, then the dek and keywords, then the body; each comes with a snippet of its body.

            When more than \(SearchOptions.defaultRankLimit) articles match, the \(SearchOptions.defaultRankLimit) \
            most recently imported of them are ranked, which keeps broad searches fast, and a note \
            on standard error says so. --rank-all ranks every match.
            """)

    @Argument(help: "Words to find (all of them, as word prefixes).")
    var text: String
    @Option(help: "Only this issue.")
    var issue: String?
    @Option(help: "At most this many results, best first.")
    var limit = 20
    @Flag(help: "Rank every match, however many (slower when thousands of articles match).")
    var rankAll = false
    @OptionGroup var store: StoreOptions

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1.") }
    }

    func run() throws {
        try reportingErrors {
            var options = SearchOptions(issue: issue, limit: limit)
            if rankAll { options.rankLimit = nil }
            let results = try store.open().search(text, options: options)
            if let ranked = results.rankedOnlyMostRecent {
                Terminal.standardError.write(
                    "note: more than \(ranked) articles match; the \(ranked) most recently imported were ranked "
                    + "(--rank-all ranks every match; more words or --issue narrow the search)\n")
            }
            if store.json { return printJSON(results.articles) }
            if results.articles.isEmpty {
                Terminal.standardError.write("no article matches every word of “\(text)”\(issue.map { " in \($0)" } ?? "")\n")
            }
            for article in results.articles {
                Terminal.standardOutput.write("\(article.globalID)  \(article.title)\n    \(article.snippet ?? "")\n")
            }
        }
    }
}

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Remove an issue's rows and its whole folder from the store, nothing else.")

    @Argument(help: "The issue's global id or apple_id.")
    var id: String
    @Flag(help: "Do not ask (needed when standard input is not a terminal).")
    var yes = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        try reportingErrors {
            let opened = try store.open(.write)
            let issue = try opened.issueSummary(id)
            if !yes {
                guard isatty(0) == 1 else {
                    throw GalleyError("refusing to delete without confirmation", hint: "Pass --yes.")
                }
                Terminal.standardError.write("Delete \(issue.appleID) (\(issue.title), \(issue.articles) articles)? [y/N] ")
                guard let answer = readLine(), answer.lowercased().hasPrefix("y") else {
                    Terminal.standardError.write("nothing deleted\n")
                    return
                }
            }
            let deleted = try opened.delete(id)
            if store.json { return printJSON(deleted) }
            Terminal.standardOutput.write("deleted \(deleted.appleID)\n")
        }
    }
}

struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store", abstract: "Check or clean the issue store.", subcommands: [Check.self, GC.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check", abstract: "Database integrity, every file present with its size and checksum, no orphans (exit 1 on problems).")
        @OptionGroup var store: StoreOptions

        func run() throws {
            var problems = false
            try reportingErrors {
                let check = try store.open().check()
                problems = !check.problems.isEmpty
                if store.json { return printJSON(check) }
                for problem in check.problems { Terminal.standardOutput.write("problem: \(problem)\n") }
                Terminal.standardOutput.write("\(check.issues) issues, \(check.files) files, database \(check.integrity): "
                    + (problems ? "\(check.problems.count) problems\n" : "all good\n"))
            }
            if problems { throw Status.problems }
        }
    }

    struct GC: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "gc", abstract: "Remove what interrupted imports left behind.")
        @OptionGroup var store: StoreOptions

        func run() throws {
            try reportingErrors {
                let removed = try store.open(.write).collectGarbage()
                if store.json { return printJSON(removed) }
                for item in removed { Terminal.standardOutput.write("removed \(item)\n") }
                Terminal.standardOutput.write("\(removed.count) leftovers removed\n")
            }
        }
    }
}

struct ArticleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "article", abstract: "Show one article.", subcommands: [Show.self, Newer.self, Older.self])

    struct Selection: ParsableArguments {
        @Argument(help: "The article's global id.")
        var id: String
        @Option(help: "The issue, when several issues have an article with this id.")
        var issue: String?
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "An article with its assets (and their paths in the store), and its issue's newer and older articles.")
        @OptionGroup var selection: Selection
        @Option(help: ArgumentHelp("Print only this custom metadata value.", valueName: "key"))
        var meta: String?
        @OptionGroup var store: StoreOptions

        func run() throws {
            try reportingErrors {
                let detail = try store.open().article(selection.id, issue: selection.issue)
                if let meta {
                    guard let value = IssueStore.meta(meta, of: detail) else {
                        throw GalleyError("the article has no custom metadata `\(meta)`")
                    }
                    if store.json { return printJSON(JSONValueBox(value)) }
                    Terminal.standardOutput.write((value.stringValue ?? JSONWriter(pretty: false).encode(value)) + "\n")
                    return
                }
                if store.json { return printJSON(detail) }
                let out = Terminal.standardOutput
                out.write("\(detail.article.title)\n\(detail.article.globalID) · issue \(detail.article.issueGlobalID) · \(detail.article.type) · \(detail.article.date)\n")
                for asset in detail.assets { out.write("  \(asset.kind) \(asset.placement): \(asset.path)\n") }
            }
        }
    }

    struct Newer: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "newer", abstract: "Articles of the same issue with a later date, nearest first.")
        @OptionGroup var selection: Selection
        @OptionGroup var store: StoreOptions

        func run() throws { try ArticleCommand.printNeighbours(selection, store, newer: true) }
    }

    struct Older: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "older", abstract: "Articles of the same issue with an earlier date, nearest first.")
        @OptionGroup var selection: Selection
        @OptionGroup var store: StoreOptions

        func run() throws { try ArticleCommand.printNeighbours(selection, store, newer: false) }
    }

    static func printNeighbours(_ selection: Selection, _ store: StoreOptions, newer: Bool) throws {
        try reportingErrors {
            let detail = try store.open().article(selection.id, issue: selection.issue)
            let list = newer ? detail.newer : detail.older
            if store.json { return printJSON(list) }
            for article in list { Terminal.standardOutput.write("\(article.globalID)  \(article.title)\n") }
        }
    }
}

struct AssetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assets",
        abstract: "List assets with their file paths in the store.",
        discussion: """
            galley assets --issue ID                  every asset of the issue
            galley assets --article ID --playlist     the article's sounds, in order
            galley assets --issue ID --cover          the issue's first image (its cover)
            galley assets --article ID --first        the article's first image
            galley assets --issue ID --count          how many
            """)

    @Option(help: "Only this issue's assets (global id or apple_id).")
    var issue: String?
    @Option(help: "Only this article's assets.")
    var article: String?
    @Option(help: "Only this kind: image, sound or video.")
    var type: String?
    @Flag(help: "The article's sounds in order (same as --type sound).")
    var playlist = false
    @Flag(help: "The issue's own first image: its cover.")
    var cover = false
    @Flag(help: "Only the first image.")
    var first = false
    @Flag(help: "Print how many there are.")
    var count = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        try reportingErrors {
            if let type, MediaKind(rawValue: type) == nil {
                throw GalleyError("--type must be image, sound or video, not `\(type)`")
            }
            var filter = AssetFilter()
            filter.issue = issue
            filter.article = article
            filter.kind = playlist ? "sound" : (cover || first) ? "image" : type
            var assets = try store.open().assets(filter)
            if cover { assets = assets.filter { $0.articleGlobalID == nil } }
            if cover || first { assets = Array(assets.prefix(1)) }
            if count {
                if store.json { return printJSON(["count": assets.count]) }
                Terminal.standardOutput.write("\(assets.count)\n")
                return
            }
            if store.json { return printJSON(assets) }
            for asset in assets { Terminal.standardOutput.write("\(asset.globalID)  \(asset.kind)  \(asset.path)\n") }
        }
    }
}
