import Foundation
import GalleyCore
import GalleyStore
import GalleyStorePostgres
import GalleyStoreSQLite

/// The one place that knows every backend: a folder opens `SQLiteStore`, a `postgres://` address
/// `PostgresStore`. A new backend is a new case of `StoreLocation` and a line here.
public struct StoreBackends: StoreOpening {
    public var environment: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    public func open(_ location: StoreLocation, access: StoreAccess) throws -> any IssueStore {
        switch location {
        case .folder(let folder): return try SQLiteStore(at: folder, access: access)
        case .postgres(let address): return try PostgresStore(address, access: access, environment: environment)
        }
    }

    public func exists(_ location: StoreLocation) -> Bool {
        switch location {
        case .folder(let folder): return SQLiteStore.exists(at: folder)
        case .postgres: return true
        }
    }
}
