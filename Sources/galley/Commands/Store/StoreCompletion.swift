import Foundation
import GalleyStore
import GalleyStoreBackends

/// Shell completion of issue ids (apple_ids) from the store the command line names (its
/// `--store`, else $GALLEY_STORE and the default): one read-only query, cheap at any size.
/// A missing or unreadable store completes nothing.
enum StoreCompletion {
    static func issueIDs(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        var given: String?
        for (position, word) in words.enumerated() {
            if word == "--store", position + 1 < words.count { given = words[position + 1] }
            if word.hasPrefix("--store=") { given = String(word.dropFirst("--store=".count)) }
        }
        guard let location = try? StoreLocation.resolve(given: given, environment: ProcessInfo.processInfo.environment),
              let store = try? StoreBackends().open(location, access: .read), let issues = try? store.issues() else { return [] }
        return issues.map(\.appleID).filter { $0.hasPrefix(prefix) }
    }
}
