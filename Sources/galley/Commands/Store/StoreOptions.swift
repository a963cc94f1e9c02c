import ArgumentParser
import Foundation
import GalleyCore
import GalleyKit
import GalleyStore
import GalleyStoreBackends

struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The issue store: a folder, or postgres://USER@HOST:PORT/DB?blobs=DIR for a shared one (default: $GALLEY_STORE, else $XDG_DATA_HOME/galley, else ~/.local/share/galley).",
        valueName: "store"), completion: .directory)
    var store: String?

    /// The location's own rule (`StoreLocation.resolve`: an empty one is refused), said as a
    /// usage error when the arguments are parsed.
    func validate() throws {
        do {
            _ = try location
        } catch let error as GalleyError {
            throw ValidationError([error.message, error.hint].compactMap { $0 }.joined(separator: ". "))
        }
    }

    /// Where the store is (`--store`, else the environment's default).
    var location: StoreLocation {
        get throws { try StoreLocation.resolve(given: store, environment: ProcessInfo.processInfo.environment) }
    }

    /// Queries open the store read-only; import, delete and gc for writing.
    func open(_ access: StoreAccess = .read) throws -> any IssueStore {
        try StoreBackends().open(location, access: access)
    }

    /// How the status lines of a command that writes the store name it (`into the store at
    /// build/store`): a default store is a folder users do not see, so every write says where
    /// it went.
    var named: String { "the store at \((try? location.display) ?? "?")" }

    /// Says on standard error why a text listing is empty: an empty store, or nothing matched.
    func explainEmpty(_ noun: String, in store: any IssueStore, _ console: Console) throws {
        if try store.issues().isEmpty {
            console.note("no \(noun): the store at \((try? location.display) ?? "?") holds no issues yet; import one with `galley import ISSUE.zip`")
        } else {
            console.note("no \(noun) match")
        }
    }
}
