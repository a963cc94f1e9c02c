import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit
@testable import GalleyStore
@testable import GalleyStorePostgres
@testable import GalleyStoreSQLite

/// Queries during concurrent replacements and deletions see a whole issue or none, on every
/// backend: every query is one read transaction (a snapshot). A writer replaces, deletes and re-imports one issue in a loop while
/// readers (each with its own connection, as separate processes have) ask for its articles, one
/// article and its assets, for a bounded time.
@Suite struct StoreRaceTests {
    init() { ProcessEnvironment.configureForArchives() }

    static let fixtures = TestFiles.fixtures

    /// What a reader saw that it must never see.
    final class Sightings: @unchecked Sendable {
        private let lock = NSLock()
        private var problems: [String] = []
        private var count = 0
        func add(_ problem: String) { lock.lock(); problems.append(problem); lock.unlock() }
        func query() { lock.lock(); count += 1; lock.unlock() }
        var result: (problems: [String], queries: Int) { lock.lock(); defer { lock.unlock() }; return (problems, count) }
    }

    @Test(arguments: StoreConformanceTests.Backend.allCases)
    func queriesSeeAWholeIssueOrNoneWhileItIsReplacedAndDeleted(backend: StoreConformanceTests.Backend) throws {
        let (store, environment) = try backend.makeLocation()
        let newer = Self.fixtures.appending(path: "zips/example-valid.zip").path
        let older = Self.fixtures.appending(path: "versions/example-valid.zip").path
        let writer = try StoreLocation.open(store, access: .create, environment: environment)
        _ = try writer.importZip(newer, force: false)
        let full = try writer.issue("example-valid")
        let articleCount = full.articles.count
        let articleID = try #require(full.articles.first?.globalID)
        let assetFilter = AssetFilter(issue: "example-valid")
        let assetCount = try writer.assets(assetFilter).count
        #expect(articleCount > 0 && assetCount > 0)

        let deadline = Date().addingTimeInterval(3)
        let sightings = Sightings()
        let group = DispatchGroup()
        for reader in 0..<2 {
            group.enter()
            Thread {
                defer { group.leave() }
                guard let store = try? StoreLocation.open(store, access: .read, environment: environment) else {
                    sightings.add("reader \(reader) could not open the store")
                    return
                }
                while Date() < deadline {
                    // Each answer is an error naming the absent issue, or the whole issue.
                    if let articles = try? store.articles(ArticleFilter(issue: "example-valid")), articles.count != articleCount {
                        sightings.add("articles: \(articles.count) of \(articleCount)")
                    }
                    if let assets = try? store.assets(assetFilter), assets.count != assetCount {
                        sightings.add("assets: \(assets.count) of \(assetCount)")
                    }
                    do {
                        let detail = try store.article(articleID, issue: "example-valid")
                        if detail.assets.isEmpty { sightings.add("an article without its assets") }
                    } catch {
                        // "no article": its issue was deleted at that moment (the snapshot holds
                        // neither); a half-written issue would have shown above.
                    }
                    sightings.query()
                }
            }.start()
        }
        var round = 0
        while Date() < deadline {
            switch round % 3 {
            case 0: _ = try writer.importZip(older, force: true)
            case 1: _ = try writer.delete("example-valid")
            default: _ = try writer.importZip(newer, force: false)
            }
            round += 1
        }
        group.wait()
        let (problems, queries) = sightings.result
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(queries > 10 && round > 3, "the race ran \(queries) queries against \(round) writes")
        #expect(try writer.check().problems == [])
    }
}
