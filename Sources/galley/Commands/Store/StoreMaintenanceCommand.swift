import ArgumentParser
import Foundation
import GalleyCore
import GalleyKit
import GalleyStore

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
