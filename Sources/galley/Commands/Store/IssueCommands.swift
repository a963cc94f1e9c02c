import ArgumentParser
import Foundation
import GalleyCore
import GalleyKit
import GalleyStore

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
            if issues.isEmpty { try store.explainEmpty("issues", in: opened) }
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
