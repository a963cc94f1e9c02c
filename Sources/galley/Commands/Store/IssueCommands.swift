import ArgumentParser
import Foundation
import GalleyCore
import GalleyKit
import GalleyStore

struct IssuesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issues", abstract: "List the store's issues, newest first.",
        discussion: "With --json: {\"issues\": [...]} (docs/json/issues.schema.json).")

    @Flag(help: "Only the newest issue.")
    var newest = false
    @Option(help: ArgumentHelp("Only issues published before this one, nearest first.", valueName: "id"),
            completion: .custom(StoreCompletion.issueIDs))
    var olderThan: String?
    @Option(help: ArgumentHelp("Only issues published after this one, nearest first.", valueName: "id"),
            completion: .custom(StoreCompletion.issueIDs))
    var newerThan: String?

    @OptionGroup var store: StoreOptions
    @OptionGroup var output: OutputOptions

    struct Document: Encodable { var issues: [StoredIssue] }

    func run() throws {
        let console = output.console
        try console.run {
            let opened = try store.open()
            var issues: [StoredIssue] = try console.timed("query") {
                if let olderThan { return try opened.issues(relativeTo: olderThan, older: true) }
                if let newerThan { return try opened.issues(relativeTo: newerThan, older: false) }
                return try opened.issues()
            }
            if newest { issues = Array(issues.prefix(1)) }
            if output.json { return console.emit(Document(issues: issues)) }
            if issues.isEmpty { try store.explainEmpty("issues", in: opened, console) }
            for issue in issues {
                console.data("\(DumplingDate.isoDay(publishDate: issue.publishDate))  \(issue.appleID)  \(issue.title) (\(issue.articles) articles)\n")
            }
        }
    }
}

struct IssueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issue", abstract: "Show one issue.", subcommands: [Show.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "An issue (by global id or apple_id) with its articles in order.",
            discussion: "With --json: {\"issue\": {...}, \"articles\": [...]} (docs/json/issue-show.schema.json).")

        @Argument(help: "The issue's global id or apple_id.", completion: .custom(StoreCompletion.issueIDs))
        var id: String

        @OptionGroup var store: StoreOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let console = output.console
            try console.run {
                let store = try store.open()
                // Printed as the store reads the articles (a 30,000-article issue's list made
                // whole was 90 MB with --json): the issue's lines first, or with --json its
                // member after the list, where the document's sorted keys put it.
                var issue: StoredIssue?
                _ = try console.timed("listing") {
                    try console.streamListing(key: "articles", trailing: { issue.map { [("issue", $0)] } ?? [] }, line: { (article: StoredArticle) in
                        "\(article.placement). \(article.title)\(article.featured ? " ★" : "")  [\(article.type)] \(article.globalID)\n"
                    }) { send in
                        try store.eachIssueArticle(id, withBodies: false, begin: { summary in
                            issue = summary
                            if !output.json {
                                console.data("\(summary.title)\n\(summary.appleID) · \(summary.globalID) · \(summary.displayDate) · updated \(DumplingDate.rfc3339(summary.lastUpdated))\n\n")
                            }
                        }, send)
                    }
                }
            }
        }
    }
}
