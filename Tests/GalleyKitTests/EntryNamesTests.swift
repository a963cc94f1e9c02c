import Foundation
import Testing
@testable import GalleyKit

/// The pack plan's entry names: the last component of a zip path, as Foundation gives it.
@Suite struct EntryNamesTests {
    @Test func theLastComponentIsFoundations() {
        for path in ["a/b/c.jpg", "c.jpg", "articles/x y/é.png", "a/"] {
            #expect(EntryNames.lastComponent(path) == (path.hasSuffix("/") ? "" : (path as NSString).lastPathComponent))
        }
    }
}
