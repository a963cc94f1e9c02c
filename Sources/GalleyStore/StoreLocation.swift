import Foundation
import GalleyCore

/// Where a store is, classified once, when `--store` (or the environment) is read: every later
/// step (messages, whether it exists, which backend opens it) switches on the case.
public enum StoreLocation: Sendable, Hashable {
    /// A folder: the SQLite store.
    case folder(URL)
    /// A `postgres://` (or `postgresql://`) address, as given: the PostgreSQL store, whose backend
    /// parses it (the password and blob folder may come from the environment).
    case postgres(String)

    /// `--store`, else `$GALLEY_STORE`, else `$XDG_DATA_HOME/galley`, else `~/.local/share/galley`.
    /// An empty `--store` is refused: it would name the current folder by accident.
    public static func resolve(given: String?, environment: [String: String]) throws -> StoreLocation {
        if let given {
            guard !given.isEmpty else {
                throw GalleyError("the store location is empty (it would name the current folder)", id: .usage,
                                  hint: "Give a folder (`--store ./store`) or a postgres:// address, or leave --store out for the default store.")
            }
            return StoreLocation(given)
        }
        if let store = environment["GALLEY_STORE"], !store.isEmpty { return StoreLocation(store) }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            return .folder(URL(fileURLWithPath: data).appending(path: "galley"))
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return .folder(URL(fileURLWithPath: home).appending(path: ".local/share/galley"))
    }

    /// The location `text` names: an address when it starts `postgres://` or `postgresql://`,
    /// else a folder's path.
    public init(_ text: String) {
        self = text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") ? .postgres(text) : .folder(URL(fileURLWithPath: text))
    }

    /// The location as messages show it: a folder's path, or the address without its password.
    public var display: String {
        switch self {
        case .folder(let url): return url.path
        case .postgres(let text): return Self.redacted(text)
        }
    }

    /// The folder, for a folder store; nil for a database.
    public var localFolder: URL? {
        if case .folder(let url) = self { return url }
        return nil
    }

    /// `text` with any password replaced by `***`.
    package static func redacted(_ text: String) -> String {
        guard var parts = URLComponents(string: text), parts.password != nil else { return text }
        parts.password = "***"
        return parts.string ?? text
    }
}

/// Opens a store at a location with the backend its case names. GalleyStore knows no backend:
/// the one implementation, `StoreBackends` (GalleyStoreBackends), is handed down by the command
/// line to what opens stores itself (`galley sync` making a reader's store).
public protocol StoreOpening: Sendable {
    /// Opens the store at `location` for `access`.
    func open(_ location: StoreLocation, access: StoreAccess) throws -> any IssueStore
    /// Whether a store is there to open (a folder holding one, or any database address: its
    /// tables are made on first write).
    func exists(_ location: StoreLocation) -> Bool
}
