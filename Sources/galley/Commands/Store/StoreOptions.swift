import ArgumentParser
import Foundation
import GalleyCore
import GalleyKit
import GalleyStore

struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The issue store folder (default: $GALLEY_STORE, else $XDG_DATA_HOME/galley, else ~/.local/share/galley).",
        valueName: "dir"))
    var store: String?

    @Flag(help: "Print JSON on standard output.")
    var json = false

    /// Queries open the store read-only; import, delete and gc for writing.
    func open(_ access: StoreAccess = .read) throws -> any IssueStore {
        try StoreLocation.open(StoreLocation.resolve(given: store, environment: ProcessInfo.processInfo.environment), access: access)
    }
}
