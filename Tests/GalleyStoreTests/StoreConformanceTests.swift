import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit
@testable import GalleyStore
import GalleyS3
@testable import GalleyStorePostgres
@testable import GalleyStoreSQLite

/// What every store backend must do, asked only through `IssueStore`, run against each: SQLite
/// (a folder) and PostgreSQL (a database on the throwaway server of scripts/pg-test-server.sh,
/// and a blob folder). It imports the example issue and the fixtures, and checks versions, every
/// query, refusals that leave the store as it was, delete, check and gc.
@Suite struct StoreConformanceTests {
    enum Backend: String, CustomTestStringConvertible {
        case sqlite
        case postgres
        /// PostgreSQL with its blobs on S3 (SeaweedFS's S3 server, scripts/s3-test-server.sh).
        case postgresS3 = "postgres+s3"
        var testDescription: String { rawValue }

        /// SQLite always; PostgreSQL (and with S3 blobs) when the tests run with the servers
        /// (`make test` always does).
        static var allCases: [Backend] {
            PostgresTestServer.enabled ? [.sqlite, .postgres, .postgresS3] : [.sqlite]
        }

        /// A new, empty store of this backend.
        func make() throws -> any IssueStore {
            let (location, environment) = try makeLocation()
            return try StoreLocation.open(location, access: .create, environment: environment)
        }

        /// Where a new store of this backend is (not yet created), with the environment its
        /// commands need: to open it more than once, as separate processes would.
        func makeLocation() throws -> (URL, [String: String]) {
            let environment = ProcessInfo.processInfo.environment
            switch self {
            case .sqlite: return (Scratch.path("galley-conformance"), environment)
            case .postgres:
                guard let url = URL(string: try PostgresTestServer.newStore()) else { throw GalleyError("no address") }
                return (url, environment)
            case .postgresS3:
                let environment = try PostgresTestServer.s3Environment()
                let bucket = PostgresTestServer.uniqueName("galley-test")
                try S3Blobs(try S3Location("s3://\(bucket)", environment: environment), root: Scratch.path("galley-s3")).createBucket()
                guard let url = URL(string: try PostgresTestServer.newStore(blobs: "s3://\(bucket)/issues")) else { throw GalleyError("no address") }
                return (url, environment)
            }
        }

        /// Puts a kept zip no issue names where this backend keeps them; returns the words check
        /// and gc use for it.
        func plantStray(_ store: any IssueStore) throws -> (problem: String, removed: String) {
            let sha = String(repeating: "0", count: 64)
            switch self {
            case .sqlite:
                try Data("stray".utf8).write(to: store.root.appending(path: "packages/\(sha).zip"))
                return ("no issue uses this zip", "packages/")
            case .postgres, .postgresS3:
                let blobs = try #require(store as? PostgresStore).blobs
                let staged = Scratch.path("galley-stray")
                try Data("stray".utf8).write(to: staged)
                #expect(try blobs.place(staged, sha256: sha, size: 5))
                return ("no issue uses this blob", self == .postgres ? "blobs/00/" : "s3://")
            }
        }

        /// Whether the store still holds the blob or kept zip at `path` (with that SHA-256).
        func holds(_ store: any IssueStore, path: String, sha256: String) throws -> Bool {
            guard self == .postgresS3 else { return FileManager.default.fileExists(atPath: path) }
            let postgres = try #require(store as? PostgresStore)
            let blobs = try #require(postgres.blobs as? S3Blobs)
            return try blobs.size(sha256) != nil
        }
    }

    static let fixtures = TestFiles.fixtures
    static let example = TestFiles.example
    static let issue = "com.example.harbour.2026-01"
    static let issueGlobalID = "4224009caba66f171d26ec50"
    static let lighthouse = "fbf92e3a2aa69e50f4c7b6e7"
    static let ferry = "5f827f80262d6fe87d41ca17"
    static let harbour = "beaab94ed7c774d7b2887818"

    init() { ProcessEnvironment.configureForArchives() }

    /// The example issue packed into a new folder.
    func exampleZip() throws -> String {
        let out = Scratch.path("galley-conformance-zip")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        return try Packer().pack(PackOptions(source: Self.example, output: out)).path
    }

    func expectClean(_ store: any IssueStore, issues: Int) throws {
        let check = try store.check()
        #expect(check.problems == [] && check.integrity == "ok")
        #expect(check.issues == issues)
    }

    @Test(arguments: Backend.allCases)
    func versionsImportReplaceAndRefuse(backend: Backend) throws {
        let store = try backend.make()
        let newer = Self.fixtures.appending(path: "zips/example-valid.zip").path
        let older = Self.fixtures.appending(path: "versions/example-valid.zip").path

        let first = try store.importZip(newer, force: false)
        #expect(first.status == .imported && first.articles > 0)
        #expect(try store.importZip(newer, force: false).status == .unchanged)
        let lastUpdated = try store.issueSummary("example-valid").lastUpdated

        // An older version is refused with its own check, and nothing changes.
        do {
            _ = try store.importZip(older, force: false)
            Issue.record("an older version was imported")
        } catch let error as DiagnosticsError {
            #expect(error.diagnostics.map(\.id) == [Check.importOlder.id])
        }
        #expect(try store.issueSummary("example-valid").lastUpdated == lastUpdated)
        try expectClean(store, issues: 1)

        // --force replaces it, and the newer one replaces that in turn.
        #expect(try store.importZip(older, force: true).status == .replaced)
        #expect(try store.issueSummary("example-valid").lastUpdated < lastUpdated)
        #expect(try store.importZip(newer, force: false).status == .replaced)
        try expectClean(store, issues: 1)
    }

    /// What `galley sync` keeps: each followed feed's last ETag and revision (replaced, never
    /// duplicated), and refused packages by SHA-256; neither touches the issues.
    @Test(arguments: Backend.allCases)
    func syncRecordsRoundTrip(backend: Backend) throws {
        let store = try backend.make()
        let url = "http://127.0.0.1:1/feed"
        #expect(try store.followedFeed(url) == nil)
        try store.recordFollowedFeed(FollowedFeed(url: url, etag: "\"r1\"", revision: 1, syncedAt: "2026-11-23T00:00:00Z"))
        try store.recordFollowedFeed(FollowedFeed(url: url, etag: nil, revision: 7, syncedAt: "2026-11-23T01:00:00Z"))
        #expect(try store.followedFeed(url) == FollowedFeed(url: url, etag: nil, revision: 7, syncedAt: "2026-11-23T01:00:00Z"))
        #expect(try store.followedFeed(url + "?other") == nil)
        let sha = String(repeating: "ab", count: 32)
        #expect(try store.refusedPackage(sha) == nil)
        let refused = RefusedPackage(sha256: sha, appleID: "example-valid", message: "no title", refusedAt: "2026-11-23T00:00:00Z")
        try store.recordRefusedPackage(refused)
        try store.recordRefusedPackage(refused)
        #expect(try store.refusedPackage(sha) == refused)
        try expectClean(store, issues: 0)
    }

    /// Independent articles merge by global id: added, unchanged (the revision stays), updated
    /// (it moves), others kept; listed newest first, undated last.
    @Test(arguments: Backend.allCases)
    func independentArticlesMerge(backend: Backend) throws {
        let store = try backend.make()
        var a = IndependentArticle(globalID: "a", title: "A")
        a.date = "2026-01-02T00:00:00Z"
        var b = IndependentArticle(globalID: "b", title: "B")
        b.date = "2026-01-03T00:00:00Z"
        b.keywords = ["x", "y"]
        let undated = IndependentArticle(globalID: "c", title: "C")
        #expect(try store.mergeIndependentArticles([a, b], source: "t").added == ["a", "b"])
        let revision = try store.revision()
        let same = try store.mergeIndependentArticles([b, a], source: "t")
        #expect(same.added.isEmpty && same.updated.isEmpty && same.unchanged == 2)
        #expect(try store.revision() == revision)
        a.title = "A, revised"
        let changed = try store.mergeIndependentArticles([a, undated], source: "t")
        #expect(changed.updated == ["a"] && changed.added == ["c"])
        #expect(try store.revision() > revision)
        #expect(try store.independentArticles() == [b, a, undated])
        try expectClean(store, issues: 0)
    }

    /// The package feed's side of the store: each import keeps its zip under its SHA-256, the
    /// version grows with every import that changes the issue (and never goes back, even after a
    /// delete), an unchanged re-import changes nothing, replaced and deleted zips go, a leftover
    /// is found by check and removed by gc, and an older-format zip is kept but withheld.
    @Test(arguments: Backend.allCases)
    func packagesAreKeptVersionedAndCollected(backend: Backend) throws {
        let store = try backend.make()
        let newer = Self.fixtures.appending(path: "zips/example-valid.zip").path
        let older = Self.fixtures.appending(path: "versions/example-valid.zip").path
        let newerDigest = try FileDigest.of(newer)
        let olderDigest = try FileDigest.of(older)

        let first = try store.importZip(older, force: false)
        #expect(first.package == ImportResult.Package(sha256: olderDigest.sha256, size: olderDigest.size, version: 1, withheld: nil))
        var package = try store.package("example-valid")
        #expect(package.version == 1 && package.sha256 == olderDigest.sha256 && package.withheld == nil)
        #expect(try FileDigest.of(store.localFile(package.file).path) == olderDigest)

        #expect(try store.importZip(older, force: false).package?.version == 1)
        #expect(try store.package("example-valid").version == 1)

        let second = try store.importZip(newer, force: false)
        #expect(second.status == .replaced && second.package?.version == 2)
        package = try store.package("example-valid")
        #expect(package.sha256 == newerDigest.sha256 && package.size == newerDigest.size)
        #expect(try !backend.holds(store, path: package.path.replacingOccurrences(of: newerDigest.sha256, with: olderDigest.sha256),
                                   sha256: olderDigest.sha256), "the replaced zip is removed")
        try expectClean(store, issues: 1)

        // Deleted, then imported again: the version goes on from where it was.
        _ = try store.delete("example-valid")
        #expect(try !backend.holds(store, path: package.path, sha256: package.sha256))
        #expect(try store.packages().isEmpty)
        #expect(try store.importZip(newer, force: false).package?.version == 3)

        // An older Linechef format is kept, but withheld from the feed with why. (The fixture
        // shares the example's global id, so it goes to a store of its own.)
        let legacyStore = try backend.make()
        let legacy = try legacyStore.importZip(Self.fixtures.appending(path: "zips/older-format-error.zip").path, force: false)
        #expect(legacy.package?.withheld?.contains("older Linechef format") == true)
        #expect(try legacyStore.packages().map(\.withheld) == [legacy.package?.withheld])
        try expectClean(legacyStore, issues: 1)

        // A zip no issue names (an import killed between keeping it and committing) is a
        // leftover: check names it, gc removes it, and the kept ones stay.
        let stray = try backend.plantStray(store)
        #expect(try store.check().problems.contains { $0.contains(stray.problem) })
        #expect(try store.collectGarbage().contains { $0.hasPrefix(stray.removed) })
        try expectClean(store, issues: 1)
        #expect(try FileDigest.of(try store.localFile(try store.package("example-valid").file).path) == newerDigest)

        #expect(throws: GalleyError.self) { try store.package("no-such-issue") }
    }

    /// PostgreSQL's check reads the files through a cursor in blob order (each blob verified
    /// once): a missing blob and one of another size are named once per file that uses them,
    /// in issue and name order, and the file count is every file's.
    @Test func aPostgresCheckNamesEachDamagedFileInIssueAndNameOrder() throws {
        guard Backend.allCases.contains(.postgres) else { return }
        let store = try #require(try Backend.postgres.make() as? PostgresStore)
        _ = try store.importZip(try exampleZip(), force: false)
        let clean = try store.check()
        #expect(clean.problems == [] && clean.files > 2)
        // Two files whose blobs sort the other way round from their names (the check reads in
        // blob order and reports in name order): the first truncated, the second gone.
        let all = try Set(store.assets(AssetFilter(issue: Self.issue)).map(\.fileName)).sorted().map { try store.file($0, issue: Self.issue) }
        let pairs = all.indices.flatMap { a in all.indices.filter { $0 > a }.map { (all[a], all[$0]) } }
        let (first, second) = try #require(pairs.first { $0.0.sha256 > $0.1.sha256 && $0.0.sha256 != $0.1.sha256 })
        let (files, names) = ([first, second], [first.name, second.name])
        try Data("short".utf8).write(to: URL(fileURLWithPath: files[0].path))
        try FileManager.default.removeItem(atPath: files[1].path)
        let check = try store.check()
        #expect(check.files == clean.files)
        #expect(check.problems == [
            "issue \(Self.issue): \(names[0]) (\(store.blobs.name(files[0].sha256))): 5 bytes, recorded \(files[0].size)",
            "issue \(Self.issue): \(names[1]) (\(store.blobs.name(files[1].sha256))): missing",
        ])
    }

    @Test(arguments: Backend.allCases)
    func aRefusedZipLeavesTheStoreAsItWas(backend: Backend) throws {
        let store = try backend.make()
        _ = try store.importZip(try exampleZip(), force: false)
        let before = try store.issue(Self.issue)
        for name in ["bad-crc-error", "symlink-error", "overlap-bomb-error", "missing-file-error", "apple-id-mismatch-error"] {
            #expect(throws: (any Error).self, "\(name)") {
                try store.importZip(Self.fixtures.appending(path: "zips/\(name).zip").path, force: true)
            }
        }
        let after = try store.issue(Self.issue)
        #expect(after.articles.map(\.globalID) == before.articles.map(\.globalID))
        try expectClean(store, issues: 1)
    }

    @Test(arguments: Backend.allCases)
    func everyQueryAnswersFromTheExample(backend: Backend) throws {
        let store = try backend.make()
        _ = try store.importZip(try exampleZip(), force: false)
        _ = try store.importZip(Self.fixtures.appending(path: "zips/example-valid.zip").path, force: false)

        // Issues, by either id; unknown ids are errors, never "all".
        #expect(try store.issues().count == 2)
        #expect(try store.issueSummary(Self.issueGlobalID).appleID == Self.issue)
        #expect(try store.issueSummary(Self.issue).globalID == Self.issueGlobalID)
        #expect(throws: GalleyError.self) { try store.issueSummary("nope") }
        let (issue, articles) = try store.issue(Self.issue)
        #expect(issue.articles == 4 && articles.map(\.placement) == [1, 2, 3, 4])
        // One at a time (`issue show`, `/issues/{id}`): the issue first, then its articles as the
        // listing of the issue has them, with bodies when asked; an unknown id throws before
        // the issue; the body's own error ends it, passed on as it is.
        for withBodies in [false, true] {
            var events: [String] = []
            var listed: [StoredArticle] = []
            try store.eachIssueArticle(Self.issueGlobalID, withBodies: withBodies, begin: { events.append("issue \($0.appleID)") }) {
                events.append("article \($0.placement)")
                listed.append($0)
            }
            #expect(events == ["issue \(Self.issue)", "article 1", "article 2", "article 3", "article 4"])
            var filter = ArticleFilter(issue: Self.issue)
            filter.withBodies = withBodies
            #expect(JSONDocument.encode(["articles": listed]) == JSONDocument.encode(["articles": try store.articles(filter)]))
            #expect(listed.allSatisfy { ($0.body != nil) == withBodies })
        }
        var begun = false
        #expect(throws: GalleyError.self) { try store.eachIssueArticle("nope", withBodies: false, begin: { _ in begun = true }) { _ in } }
        #expect(!begun)
        struct Halt: Error {}
        var seen = 0
        #expect(throws: Halt.self) {
            try store.eachIssueArticle(Self.issue, withBodies: false, begin: { _ in }) { _ in
                seen += 1
                if seen == 2 { throw Halt() }
            }
        }
        #expect(seen == 2)

        // Articles: every filter applies.
        #expect(try store.articles(ArticleFilter(issue: Self.issue, type: "video")).map(\.globalID) == [Self.harbour])
        #expect(try store.articles(ArticleFilter(issue: Self.issue, excludeType: "video")).count == 3)
        #expect(try store.articles(ArticleFilter(issue: Self.issue, featured: true)).map(\.globalID) == [Self.lighthouse])
        #expect(try store.articles(ArticleFilter(issue: Self.issue, keyword: "night shift")).count == 2)
        #expect(try store.articles(ArticleFilter(issue: Self.issue, keyword: "night")).isEmpty)
        #expect(try store.articles(ArticleFilter(issue: Self.issue, limit: 3, page: 1)).map(\.placement) == [4])
        #expect(throws: GalleyError.self) { try store.articles(ArticleFilter(issue: "nope")) }
        // Keyset pages of one issue: the next page from its cursor; that cursor given to another
        // issue's listing is refused in words (a usage error), not answered with an empty page.
        let firstPage = try store.articlePage(ArticleFilter(issue: Self.issue, limit: 3))
        var nextPage = ArticleFilter(issue: Self.issue, limit: 3)
        nextPage.after = try #require(firstPage.next)
        #expect(firstPage.items.map(\.placement) == [1, 2, 3])
        #expect(try store.articlePage(nextPage).items.map(\.placement) == [4])
        nextPage.issue = "example-valid"
        let refused = #expect(throws: GalleyError.self) { try store.articlePage(nextPage) }
        #expect(refused?.id == .usage && refused?.message.contains("another issue's listing") == true, "\(String(describing: refused))")
        // One at a time (`galley articles`): the body's own error ends it, passed on as it is.
        struct Enough: Error {}
        var taken: [Int] = []
        #expect(throws: Enough.self) {
            try store.eachArticle(ArticleFilter(issue: Self.issue)) { article in
                taken.append(article.placement)
                if taken.count == 2 { throw Enough() }
            }
        }
        #expect(taken == [1, 2])

        // One article with its assets and its neighbours by date.
        let ferry = try store.article(Self.ferry, issue: nil)
        #expect(ferry.assets.map(\.kind) == ["image", "sound"])
        #expect(ferry.newer.map(\.globalID) == [Self.lighthouse])
        #expect(ferry.older.map(\.globalID).first == Self.harbour)
        // Every article's document written as the store reads its neighbours is the detail's,
        // whose neighbours are those of the same issue with a later date (nearest first) and an
        // earlier one (nearest first).
        let everyArticle = try store.articles(ArticleFilter(issue: Self.issue))
        for article in everyArticle {
            let detail = try store.article(article.globalID, issue: Self.issue)
            var written = ""
            try store.writeArticleDocument(article.globalID, issue: Self.issue) { written += $0 }
            #expect(written == JSONDocument.encode(detail), "\(article.globalID)")
            let time = { (a: StoredArticle) in ISODateTime(parsing: a.date).map(\.millisecondsSinceEpoch) }
            let own = try #require(time(article))
            let newerTimes = detail.newer.compactMap(time), olderTimes = detail.older.compactMap(time)
            #expect(newerTimes.count == detail.newer.count && newerTimes.allSatisfy { $0 > own } && newerTimes == newerTimes.sorted())
            #expect(olderTimes.count == detail.older.count && olderTimes.allSatisfy { $0 < own } && olderTimes == olderTimes.sorted(by: >))
            #expect(detail.newer.count + detail.older.count == everyArticle.filter { time($0) != own }.count)
            // One side asked for is that side alone; none, the article alone.
            #expect(try store.article(article.globalID, issue: Self.issue, neighbours: [.newer]).newer.map(\.globalID) == detail.newer.map(\.globalID))
            #expect(try store.article(article.globalID, issue: Self.issue, neighbours: [.newer]).older.isEmpty)
            #expect(try store.article(article.globalID, issue: Self.issue, neighbours: [.older]).older.map(\.globalID) == detail.older.map(\.globalID))
            #expect(try store.article(article.globalID, issue: Self.issue, neighbours: [.older]).newer.isEmpty)
            let alone = try store.article(article.globalID, issue: Self.issue, neighbours: [])
            #expect(alone.newer.isEmpty && alone.older.isEmpty && alone.article.globalID == article.globalID && alone.assets.count == detail.assets.count)
        }
        for asset in ferry.assets {
            let local = try store.localFile(try store.file(asset.fileName, issue: Self.issue))
            #expect(FileManager.default.fileExists(atPath: local.path))
            #expect(try FileDigest.of(local.path).sha256 == local.sha256)
        }

        // Assets: of the issue, its own (the cover first), of one kind, the first image.
        #expect(try store.assets(AssetFilter(issue: Self.issue, issueOwn: true)).map(\.fileName) == ["cover.jpg", "masthead.png"])
        #expect(try store.assets(AssetFilter(issue: Self.issue, issueOwn: true, first: true)).map(\.fileName) == ["cover.jpg"])
        #expect(try store.assets(AssetFilter(issue: Self.issue, kind: .sound)).map(\.articleGlobalID) == [Self.ferry])
        // Counted without listing, every filter counts what it lists; unknown ids fail alike.
        let filters = [
            AssetFilter(), AssetFilter(issue: Self.issue), AssetFilter(issue: Self.issue, issueOwn: true),
            AssetFilter(issue: Self.issue, issueOwn: true, first: true), AssetFilter(issue: Self.issue, kind: .sound),
            AssetFilter(kind: .image), AssetFilter(kind: .video), AssetFilter(first: true), AssetFilter(article: Self.ferry),
        ]
        for filter in filters {
            #expect(try store.assetCount(filter) == store.assets(filter).count, "\(filter)")
        }
        #expect(try store.assetCount(AssetFilter()) > 4)
        // One at a time (`galley assets`; `assets` collects it, so the answers above are its):
        // an unknown id throws before the first; the body's error ends it there.
        if let postgres = store as? PostgresStore {
            // Through the server's cursor a few rows a FETCH, the batches joined are the listing.
            for batch in [1, 2, 3] {
                var fetched: [String] = []
                try postgres.eachAsset(AssetFilter(), batch: batch) { fetched.append($0.globalID) }
                #expect(try fetched == store.assets(AssetFilter()).map(\.globalID), "batches of \(batch)")
            }
        }
        struct Stop: Error {}
        var handed = 0
        #expect(throws: GalleyError.self) { try store.eachAsset(AssetFilter(issue: "nope")) { _ in handed += 1 } }
        #expect(throws: Stop.self) {
            try store.eachAsset(AssetFilter()) { _ in
                handed += 1
                if handed == 2 { throw Stop() }
            }
        }
        #expect(handed == 2)
        #expect(throws: GalleyError.self) { try store.assetCount(AssetFilter(issue: "nope")) }
        #expect(throws: GalleyError.self) { try store.assetCount(AssetFilter(article: "nope")) }

        // Search, scoped and not.
        #expect(try store.search("lighthouse", options: SearchOptions(issue: Self.issue)).articles.first?.globalID == Self.lighthouse)
        #expect(throws: GalleyError.self) { try store.search("x", options: SearchOptions(issue: "nope")) }

        // Delete removes one issue and nothing else; gc then has nothing to do.
        #expect(try store.delete(Self.issue).globalID == Self.issueGlobalID)
        #expect(try store.issues().map(\.appleID) == ["example-valid"])
        #expect(throws: GalleyError.self) { try store.article(Self.ferry, issue: nil) }
        #expect(try store.collectGarbage() == [])
        try expectClean(store, issues: 1)
    }
}

/// What only the PostgreSQL store has: the revision kept by LISTEN/NOTIFY, planner statistics.
@Suite(.enabled(if: PostgresTestServer.enabled, "needs GALLEY_TEST_POSTGRES (make test starts a server)"))
struct PostgresRevisionTests {
    init() { ProcessEnvironment.configureForArchives() }

    /// A store that has answered `revision()` once learns of another connection's commit from
    /// its notification, without reading the table again, within a second.
    @Test func anotherInstancesImportIsNotifiedWithinASecond() throws {
        guard let url = URL(string: try PostgresTestServer.newStore()) else { throw GalleyError("no address") }
        let writer = try #require(try StoreLocation.open(url, access: .create) as? PostgresStore)
        let reader = try #require(try StoreLocation.open(url, access: .read) as? PostgresStore)
        let before = try reader.revision()
        // The listener's start is not what is measured (a loaded machine may take a while to
        // connect): up to 10 s for it; the notification itself, within a second.
        let started = Date().addingTimeInterval(10)
        while reader.revisions.cached == nil && Date() < started { Thread.sleep(forTimeInterval: 0.01) }
        #expect(reader.revisions.cached == before, "the listener is up and knows the revision")
        _ = try writer.importZip(StoreConformanceTests.fixtures.appending(path: "zips/example-valid.zip").path, force: false)
        let after = try writer.revision()
        #expect(after > before)
        let deadline = Date().addingTimeInterval(1)
        while reader.revisions.cached != after && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        #expect(reader.revisions.cached == after, "notified, not read")
        #expect(try reader.revision() == after)
    }

    /// After a load of many issues (several zips in one import, a store copy), the planner knows
    /// how many articles the store holds at once, not when autovacuum next wakes up.
    @Test func settlingAfterALoadCountsTheArticlesAndEmptiesTheIndexsPendingList() throws {
        guard let url = URL(string: try PostgresTestServer.newStore()) else { throw GalleyError("no address") }
        let store = try #require(try StoreLocation.open(url, access: .create) as? PostgresStore)
        _ = try store.importZip(StoreConformanceTests.fixtures.appending(path: "zips/example-valid.zip").path, force: false)
        func estimated() throws -> Double? {
            try store.read { connection in
                // -1 until the table was first analyzed (or vacuumed).
                try connection.rows("SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'article'", store.logger)
                    .first.map { try $0["n"].decode(Double.self) }
            }
        }
        let articles = try store.articles(ArticleFilter(issue: "example-valid")).count
        #expect(articles > 0)
        func pending() throws -> Int64? {
            try store.read { connection in
                try connection.run("CREATE EXTENSION IF NOT EXISTS pgstattuple", store.logger)
                return try connection.rows("SELECT pending_tuples::int8 AS n FROM pgstatginindex('article_search')", store.logger)
                    .first.map { try $0.int("n") }
            }
        }
        #expect(try estimated() == -1, "nothing analyzed the new table yet")
        #expect(try pending() == Int64(articles), "the new articles' words wait in the search index's pending list")
        try store.settleAfterLoad()
        #expect(try estimated() == Double(articles))
        #expect(try pending() == 0, "the search index's pending list is merged")
    }
}
