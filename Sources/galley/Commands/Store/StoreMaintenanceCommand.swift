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
                console.status("\(removed.count) leftovers removed")
            }
        }
    }
}
