import ArgumentParser
import Foundation
import GalleyCore
import GalleyKit
import GalleyStore

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Remove an issue's rows and its whole folder from the store, nothing else.",
        discussion: "With --json: {\"deleted\": {...the issue...}}, or null when the question was answered no (docs/json/delete.schema.json).")

    @Argument(help: "The issue's global id or apple_id.", completion: .custom(StoreCompletion.issueIDs))
    var id: String
    @Flag(help: "Do not ask (needed when standard input is not a terminal).")
    var yes = false
    @OptionGroup var store: StoreOptions
    @OptionGroup var output: OutputOptions

    /// `deleted` is null when the question was answered no.
    struct Document: Encodable { @JSONNullable var deleted: StoredIssue? }

    func run() throws {
        let console = output.console
        try console.run {
            let opened = try store.open(.write)
            let issue = try opened.issueSummary(id)
            if !yes {
                guard isatty(0) == 1 else {
                    throw GalleyError("refusing to delete without confirmation", id: .notConfirmed, hint: "Pass --yes.")
                }
                console.err.write("Delete \(issue.appleID) (\(issue.title), \(issue.articles) articles)? [y/N] ")
                guard let answer = readLine(), answer.lowercased().hasPrefix("y") else {
                    console.note("nothing deleted")
                    if output.json { console.emit(Document(deleted: nil)) }
                    return
                }
            }
            let deleted = try opened.delete(id)
            if output.json { return console.emit(Document(deleted: deleted)) }
            console.status("deleted \(deleted.appleID) from \(store.named)")
        }
    }
}
