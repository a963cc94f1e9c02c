import Foundation
import GRDB
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit
@testable import GalleyStore
@testable import GalleyStoreSQLite
import GalleyTestSupport

/// The import's rows written beside its pass (`BesideRows`, the command's way) are the rows the
/// import writes after its pass from the extracted latest.json (the way of `ImportJob.checkingFirst`,
/// and the one the command falls back to): the same tables, row for row, ids included (listings
/// without an ORDER BY come in id order), the same search index.
@Suite struct BesideRowsTests {
    static let zips = TestFiles.fixtures.appending(path: "zips")

    /// Every row of the store's tables and of the search index's terms, as text; the issue's
    /// `folder` left out (its name carries a random token).
    static func rows(_ root: URL) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.prepareDatabase { db in SearchText.register(db) }
        let queue = try DatabaseQueue(path: root.appending(path: "store.sqlite").path, configuration: configuration)
        return try queue.read { db in
            var lines: [String] = []
            // Files by name, without their row ids: beside the pass latest.json's row comes last
            // (written on its checks' thread, it is known once the pass ends), after it first;
            // nothing reads a file by its row id.
            for (table, order) in [("issue", "id"), ("article", "id"), ("asset", "id"), ("file", "issueId, name"), ("packageVersion", "appleID"),
                                   ("storeRevision", "id"), ("articleSearchTerms", "term, doc, col, offset")] {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY \(order)") {
                    let values = row.columnNames.filter { $0 != "folder" && !(table == "file" && $0 == "id") }
                        .map { "\($0)=\(row[$0] as DatabaseValue)" }
                    lines.append("\(table): " + values.joined(separator: " "))
                }
            }
            return lines
        }
    }

    /// Each zip into a new store, both ways, and `example-valid` over its older version.
    /// `many-articles-valid` has 70 articles (more than the queue to the rows' writer holds);
    /// `articles-first-valid` gives its articles before the issue's fields (the rows are then
    /// written after the pass); `example-valid` replaces an older version of itself.
    @Test(arguments: ["many-articles-valid.zip", "articles-first-valid.zip", "example-valid.zip", "svg-clean-valid.zip"])
    func theRowsWrittenBesideThePassAreTheRowsWrittenAfterIt(_ name: String) throws {
        let zip = Self.zips.appending(path: name).path
        // The fixtures share one issue global id: a store holds one of them at a time.
        let held = name == "example-valid.zip" ? [TestFiles.fixtures.appending(path: "versions/example-valid.zip").path] : []
        let folder = try Scratch.folder("galley-beside-rows")
        var dumps: [[String]] = []
        for beside in [true, false] {
            let root = folder.appending(path: beside ? "beside" : "after")
            let store = try SQLiteStore(at: root)
            for path in held { _ = try store.importZip(path, force: false) }
            let result = beside ? try store.importZip(ImportJob.open(zip).withRowsBeside(.always))
                : try store.importZip(ImportJob.open(zip).checkingFirst())
            #expect(result.status == (name == "example-valid.zip" ? .replaced : .imported))
            // latest.json giving its articles first falls back to the rows after the pass.
            #expect(result.rowsWrittenBesideThePass == (beside && name != "articles-first-valid.zip"))
            // Every file on disk as its row says (latest.json too, written beside the pass from
            // its checks' thread): sizes and SHA-256 read back.
            let check = try store.check()
            #expect(check.problems.isEmpty && check.files > 1, "\(name): \(check.problems)")
            dumps.append(try Self.rows(root))
        }
        #expect(dumps[0].count > 10)
        for (a, b) in Swift.zip(dumps[0], dumps[1]) where a != b {
            Issue.record("\(name): beside \(a)\n    after \(b)")
            break
        }
        #expect(dumps[0].count == dumps[1].count, "\(name)")
    }

    /// The rows go beside the pass for an issue whose latest.json is large, and large beside its
    /// media; the command decides so for the fixtures' zips (all small), which the import of
    /// `bothWaysDecideAlike` and the end-to-end tests then run the other way.
    @Test func theRowsGoBesideForALargeLatestJsonOnly() throws {
        #expect(BesideRows.pays(manifestBytes: 128_000_000, zipBytes: 651_000_000))
        #expect(BesideRows.pays(manifestBytes: 8 << 20, zipBytes: 80 << 20))
        #expect(!BesideRows.pays(manifestBytes: 12_700_000, zipBytes: 1_909_000_000))
        #expect(!BesideRows.pays(manifestBytes: 1_270_000, zipBytes: 1_300_000))
        let opened = try ImportJob.open(Self.zips.appending(path: "many-articles-valid.zip").path)
        #expect(opened.opened.manifestBytes > 50_000)
        #expect(!BesideRows.pays(manifestBytes: opened.opened.manifestBytes, zipBytes: opened.opened.facts.declaredBytes))
        // Only `galley import` allows them (sync and serve hold other memory beside the import).
        #expect(opened.opened.rowsBeside == .never && !SQLiteStore.writesRowsBeside(opened.opened))
        #expect(!SQLiteStore.writesRowsBeside(opened.withRowsBeside(.whenLarge).opened) && SQLiteStore.writesRowsBeside(opened.withRowsBeside(.always).opened))
        #expect(try ImportJob.open(Self.zips.appending(path: "manifest-last-info.zip").path).opened.manifestBytes == 0)
    }

    /// The issue's fields of a latest.json, articles first or last, with two articles.
    static func manifest(articlesFirst: Bool) -> String {
        let articles = """
            "articles": [{"global_id": "a1", "title": "One", "body": "<p>night ferry</p>", "images": {"ordered": [{"id": "p1", "file_name": "p.jpg"}]}},
                         {"global_id": "a2", "title": "Two", "body": "<p>crane</p>"}]
            """
        let issue = #""global_id": "g1", "apple_id": "beside", "last_updated": "2020-03-01T00:00:00.000+0000", "images": {"ordered": [{"id": "cover", "file_name": "c.jpg"}]}"#
        return articlesFirst ? "{\(articles), \(issue)}" : "{\(issue), \(articles)}"
    }

    /// Hands each article of `text` to `rows` as latest.json's checks would; returns the issue.
    static func feed(_ rows: BesideRows, _ text: String) throws -> IssueRecord {
        var stream = ManifestStream(text: text)
        let observer = rows.observer
        let issue = try stream.read { number, node, members in observer(number, node, members) }.record
        rows.articlesEnded()
        return issue
    }

    @Test func theRowsAreCommittedWithTheIssuesRowAndItsNextId() throws {
        let root = try Scratch.folder("galley-beside-rows").appending(path: "store")
        let store = try SQLiteStore(at: root)
        _ = try store.importZip(Self.zips.appending(path: "example-valid.zip").path, force: false)
        let rows = BesideRows(store)
        let issue = try Self.feed(rows, Self.manifest(articlesFirst: false))
        #expect(rows.usable(for: issue))
        let package = ImportResult.Package(sha256: "00", size: 1, version: 1, withheld: nil)
        var given: Int64?
        let counts = try rows.complete { db, id in
            given = id
            _ = try SQLiteStore.insertIssueRow(issue, id: id, folder: "beside.x", contentDigest: "d", package: package, db, root: root)
        }
        rows.abandon()  // after `complete`: nothing
        #expect(counts.articles == 2 && counts.assets == 2)
        #expect(given == 2)
        let written = try store.database.read { db in
            try String.fetchAll(db, sql: """
                SELECT a.globalID || ' ' || a.placement || ' ' || i.appleID FROM article a JOIN issue i ON i.id = a.issueId
                WHERE i.id = 2 ORDER BY a.id
                """)
        }
        #expect(written == ["a1 1 beside", "a2 2 beside"])
        #expect(try store.search("ferry").articles.map(\.globalID) == ["a1"])
    }

    /// The files' rows go in whenever no article waits, each file once it is both written and
    /// hashed, and `complete` writes the rest: every file once, in the pass's order.
    @Test func filesAreWrittenWhileNoArticleWaitsAndTheRestAtTheEnd() throws {
        let root = try Scratch.folder("galley-beside-rows").appending(path: "store")
        let store = try SQLiteStore(at: root)
        let rows = BesideRows(store)
        var stream = ManifestStream(text: Self.manifest(articlesFirst: false))
        let observer = rows.observer
        let issue = try stream.read { number, node, members in observer(number, node, members) }.record
        let names = (0..<300).map { "beside/media/f\($0).jpg" }
        func digest(_ number: Int) -> SHA256Digest { SHA256Digest(Array(SHA256Hasher.hex(of: names[number]).utf8.prefix(32))) }
        for (number, name) in names.enumerated() {
            rows.files.wrote(Substring(name), size: Int64(number))
            if number < 200 { rows.files.hashed(digest(number)) }
        }
        // The writer finds no article waiting for a millisecond and takes the 200 files ready.
        let deadline = Date().addingTimeInterval(10)
        while rows.files.taken < 200 && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        #expect(rows.files.taken == 200, "the files written and hashed, and none beyond")
        for number in 200..<300 { rows.files.hashed(digest(number)) }
        rows.articlesEnded()
        #expect(rows.usable(for: issue))
        let package = ImportResult.Package(sha256: "00", size: 1, version: 1, withheld: nil)
        _ = try rows.complete { db, id in
            _ = try SQLiteStore.insertIssueRow(issue, id: id, folder: "beside.x", contentDigest: "d", package: package, db, root: root)
            try SQLiteStore.insertFiles(rows.files.files.dropFirst(rows.files.taken), issue: id, db)
        }
        let written = try store.database.read { db in
            try Row.fetchAll(db, sql: "SELECT name, size, sha256 FROM file ORDER BY id").map { "\($0[0] as String) \($0[1] as Int64) \($0[2] as String)" }
        }
        #expect(written == names.indices.map { "\(names[$0]) \($0) \(digest($0).hex)" })
    }

    @Test func abandonedRowsLeaveTheStoreAsItWas() throws {
        let root = try Scratch.folder("galley-beside-rows").appending(path: "store")
        let store = try SQLiteStore(at: root)
        _ = try store.importZip(Self.zips.appending(path: "example-valid.zip").path, force: false)
        let before = try StoreSnapshot.of(root.path)
        let rows = BesideRows(store)
        let issue = try Self.feed(rows, Self.manifest(articlesFirst: false))
        #expect(rows.usable(for: issue))
        rows.abandon()
        #expect(throws: (any Error).self) { _ = try rows.complete { _, _ in } }
        #expect(try StoreSnapshot.of(root.path) == before)
        // Abandoned before any article came: the same.
        BesideRows(store).abandon()
        #expect(try StoreSnapshot.of(root.path) == before)
    }

    /// Rows made before the issue's own fields were read, or for an issue without articles, are
    /// not the issue's: the import writes them after its pass instead.
    @Test func rowsMadeWithoutTheIssuesFieldsAreNotUsed() throws {
        let root = try Scratch.folder("galley-beside-rows").appending(path: "store")
        let store = try SQLiteStore(at: root)
        let rows = BesideRows(store)
        let issue = try Self.feed(rows, Self.manifest(articlesFirst: true))
        #expect(issue.globalID == "g1")
        #expect(!rows.usable(for: issue))
        rows.abandon()

        let empty = BesideRows(store)
        let none = try Self.feed(empty, #"{"global_id": "g1", "articles": []}"#)
        #expect(!empty.usable(for: none))
        empty.abandon()
    }
}
