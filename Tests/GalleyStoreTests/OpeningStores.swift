import Foundation
import GalleyStore
import GalleyStoreBackends

/// The tests name a store by URL (a folder's file URL, or a database address) and open it as the
/// command line does, through `StoreBackends`.
extension StoreLocation {
    init(_ url: URL) { self.init(url.isFileURL ? url.path : url.absoluteString) }

    static func open(
        _ url: URL, access: StoreAccess, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> any IssueStore {
        try StoreBackends(environment: environment).open(StoreLocation(url), access: access)
    }

    static func display(_ url: URL) -> String { StoreLocation(url).display }
}
