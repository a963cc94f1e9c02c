import ArgumentParser
import Foundation
import GalleyCore
import GalleyKit
import GalleyStore

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
