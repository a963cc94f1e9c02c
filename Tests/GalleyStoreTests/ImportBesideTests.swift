import Foundation
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit
@testable import GalleyStore
@testable import GalleyStorePostgres
@testable import GalleyStoreSQLite
import GalleyTestSupport

/// The import that checks latest.json beside the pass extracting the files (an `ImportJob` as
/// the command opens it) and the one that checks first (`ImportJob.checkingFirst`, the
/// PostgreSQL store's and `store copy`'s way) must decide every zip alike.
struct ImportBesideTests {
    init() { ProcessEnvironment.configureForArchives() }

    /// What an import came to, comparable across the two ways (finding ids as sets: the two
    /// ways list them in another order).
    enum Outcome: Equatable {
        case imported(status: String, articles: Int, assets: Int, files: Int, package: String?, warnings: Set<String>)
        case refused(Set<String>)
        case failed(String)
    }

    static let zips = (try? FileManager.default.contentsOfDirectory(
        atPath: StoreConformanceTests.fixtures.appending(path: "zips").path))?.filter { $0.hasSuffix(".zip") }.sorted() ?? []

    static func outcome(_ body: () throws -> ImportResult) -> Outcome {
        do {
            let result = try body()
            return .imported(status: result.status.rawValue, articles: result.articles, assets: result.assets, files: result.files,
                             package: result.package?.sha256, warnings: Set(result.warnings.map(\.id.rawValue)))
        } catch let error as DiagnosticsError {
            return .refused(Set(error.diagnostics.map(\.id.rawValue)))
        } catch let error as GalleyError {
            return .failed(error.id.rawValue)
        } catch {
            return .failed("\(error)")
        }
    }

    static func files(_ root: URL) throws -> [String: Data] { try StoreSnapshot.of(root.path) }

    /// Each fixture into a store already holding the example issue: the same outcome both
    /// ways; a zip refused either way leaves the store's files as they were and nothing in
    /// staging (the beside way had begun extracting there).
    @Test(arguments: zips) func bothWaysDecideAlike(_ name: String) throws {
        let zip = StoreConformanceTests.fixtures.appending(path: "zips/\(name)").path
        let example = StoreConformanceTests.fixtures.appending(path: "zips/example-valid.zip").path
        let folder = try Scratch.folder("galley-beside")
        var outcomes: [Outcome] = []
        // Beside with the articles' rows written beside the pass too (`BesideRows`: the
        // command's way for a large latest.json), beside with them after it, and in turn.
        for (beside, rows) in [(true, true), (true, false), (false, false)] {
            let root = folder.appending(path: beside ? "beside-\(rows)" : "gate")
            let store = try SQLiteStore(at: root)
            _ = try store.importZip(example, force: false)
            let before = try Self.files(root)
            let outcome = Self.outcome {
                beside ? try store.importZip(ImportJob.open(zip).withRowsBeside(rows ? .always : .never))
                    : try store.importZip(ImportJob.open(zip).checkingFirst())
            }
            outcomes.append(outcome)
            #expect(try FileManager.default.contentsOfDirectory(atPath: root.appending(path: "staging").path).isEmpty,
                    "\(name): staging is empty after the import (beside: \(beside))")
            if case .imported = outcome { continue }
            #expect(try Self.files(root) == before, "\(name): the store's files are as they were (beside: \(beside))")
        }
        #expect(outcomes[0] == outcomes[2] && outcomes[1] == outcomes[2], "\(name)")
    }

    /// The file's identity (device and inode): the same for two names of one file.
    static func inode(_ path: String) throws -> [UInt64] {
        var info = stat()
        guard stat(path, &info) == 0 else { throw GalleyError("cannot stat \(path)") }
        return [UInt64(info.st_dev), UInt64(info.st_ino)]
    }

    /// A zip the caller vouches for (sync's download, `Opened.adopting`) is kept by a second
    /// name, both ways of importing; one whose digest has another size, or one nobody vouched
    /// for, is copied and hashed; the kept zip is named by its digest every time.
    @Test(arguments: [true, false]) func aVouchedForZipIsKeptByALinkAndAnyOtherIsCopied(beside: Bool) throws {
        let folder = try Scratch.folder("galley-adopt")
        let zip = folder.appending(path: "download.zip").path
        try FileManager.default.copyItem(atPath: StoreConformanceTests.fixtures.appending(path: "zips/example-valid.zip").path, toPath: zip)
        let digest = try FileDigest.of(zip)
        func keep(_ opened: ImportJob, _ name: String) throws -> (kept: String, result: ImportResult) {
            let root = folder.appending(path: name)
            let store = try SQLiteStore(at: root)
            let result = beside ? try store.importZip(opened)
                : try store.importZip(opened.checkingFirst())
            #expect(try FileManager.default.contentsOfDirectory(atPath: root.appending(path: "staging").path).isEmpty)
            return (root.appending(path: "packages/\(digest.sha256).zip").path, result)
        }
        let adopted = try keep(ImportJob.open(zip).adopting(digest), "adopted")
        #expect(adopted.result.package?.sha256 == digest.sha256)
        #expect(try Self.inode(adopted.kept) == Self.inode(zip), "the download itself is kept")

        let copied = try keep(ImportJob.open(zip), "copied")
        #expect(copied.result.package?.sha256 == digest.sha256)
        #expect(try Self.inode(copied.kept) != Self.inode(zip))

        // A digest that is not this file's (another size): the file is copied and its own
        // digest names it, not the one given.
        let wrong = FileDigest(sha256: String(repeating: "0", count: 64), size: digest.size + 1)
        let refusedLink = try keep(ImportJob.open(zip).adopting(wrong), "wrong")
        #expect(refusedLink.result.package?.sha256 == digest.sha256)
        #expect(try Self.inode(refusedLink.kept) != Self.inode(zip))
        #expect(try FileDigest.of(refusedLink.kept) == digest)

        // A symbolic link vouched for: link(2) would keep the link itself; the file is copied.
        let symlink = folder.appending(path: "symlink.zip").path
        try FileManager.default.createSymbolicLink(atPath: symlink, withDestinationPath: zip)
        let root = folder.appending(path: "symlink")
        let store = try SQLiteStore(at: root)
        let job = try ImportJob.open(symlink).adopting(digest)
        _ = try store.importZip(beside ? job : job.checkingFirst())
        let kept = root.appending(path: "packages/\(digest.sha256).zip").path
        #expect(FileStatus(kept, follow: false)?.kind == .file)
        #expect(try Self.inode(kept) != Self.inode(zip))
    }

    /// latest.json's refusal comes from the beside way with its own words (an article without
    /// a title), and the zip left nothing behind.
    @Test func aManifestRefusedBesideTheExtractionNamesItsFinding() throws {
        let zip = StoreConformanceTests.fixtures.appending(path: "zips/missing-title-error.zip").path
        let folder = try Scratch.folder("galley-beside")
        let store = try SQLiteStore(at: folder.appending(path: "store"))
        let opened = try ImportJob.open(zip)
        #expect(opened.opened.checksBeside, "latest.json is the first entry: the beside way is taken")
        let error = try #require(throws: DiagnosticsError.self) { try store.importZip(opened) }
        #expect(error.diagnostics.contains { $0.id == Check.manifestKeyMissing.id && $0.message.contains("`title`") })
        #expect(try store.issues().isEmpty)
    }

    /// A job runs once: what its checks read is handed on and dropped, so a second import of
    /// the same job is refused in words (and changes nothing), and a new job imports the zip.
    @Test(arguments: [false, true]) func anImportJobRunsOnce(checkingFirst: Bool) throws {
        let zip = StoreConformanceTests.fixtures.appending(path: "zips/example-valid.zip").path
        let folder = try Scratch.folder("galley-beside")
        let job = checkingFirst ? try ImportJob.open(zip).checkingFirst() : try ImportJob.open(zip)
        let first = try SQLiteStore(at: folder.appending(path: "first")).importZip(job)
        #expect(first.status == .imported)
        let second = try SQLiteStore(at: folder.appending(path: "second"))
        let error = try #require(throws: GalleyError.self) { try second.importZip(job) }
        #expect(error.message.contains("has already run"), "\(error.message)")
        #expect(try second.issues().isEmpty)
        let again = try second.importZip(ImportJob.open(zip))
        #expect(again.status == .imported && again.package?.sha256 == first.package?.sha256)
    }

    /// The versions rule the same way: the same zip again is unchanged (and takes the way that
    /// extracts nothing), an older one and an edited one with the same last_updated are
    /// refused and leave the store as it was, `force` replaces.
    /// latest.json's first bytes give the issue's own fields, which Galley's and Linechef's
    /// zips put before the articles; a zip whose latest.json is not its first entry gives none.
    @Test func theIssueFieldsArePeekedFromLatestJSONsFirstBytes() throws {
        let zips = StoreConformanceTests.fixtures.appending(path: "zips")
        let peeked = try #require(try ImportJob.open(zips.appending(path: "example-valid.zip").path).opened.peekIssue())
        #expect(peeked.appleID == "example-valid")
        #expect(peeked.globalID == "5f0000000000000000000010")
        #expect(peeked.lastUpdated == "2020-03-01T00:00:00.000+0000")
        let older = try #require(try ImportJob.open(StoreConformanceTests.fixtures.appending(path: "versions/example-valid.zip").path).opened.peekIssue())
        #expect(older.lastUpdated < peeked.lastUpdated)
    }

    @Test func theVersionsRuleBesideTheExtraction() throws {
        let fixtures = StoreConformanceTests.fixtures
        let current = fixtures.appending(path: "zips/example-valid.zip").path
        let older = fixtures.appending(path: "versions/example-valid.zip").path
        let edited = fixtures.appending(path: "versions/edited/example-valid.zip").path
        // The older version with its articles before the issue's fields: its first bytes give
        // no version (the peek stops at the first article).
        let articlesFirst = fixtures.appending(path: "versions/articles-first/example-valid.zip").path
        #expect(try ImportJob.open(articlesFirst).opened.peekIssue().flatMap { SQLiteStore.milliseconds($0.lastUpdated) } == nil)
        let folder = try Scratch.folder("galley-beside")
        let root = folder.appending(path: "store")
        let store = try SQLiteStore(at: root)
        #expect(try store.extractsBeside(ImportJob.open(current)), "a new issue is checked beside its extraction")
        #expect(try store.importZip(ImportJob.open(current)).status == .imported)
        // The same files, an older version, the same version edited: the versions decide
        // before anything is extracted; with --force the edited one is extracted beside.
        // A held issue's zip whose version the first bytes do not tell takes that way too.
        for zip in [current, older, edited, articlesFirst] {
            #expect(try !store.extractsBeside(ImportJob.open(zip)), "\(zip)")
        }
        #expect(try store.extractsBeside(ImportJob.open(edited).forcing()))
        let before = try Self.files(root)
        #expect(try store.importZip(ImportJob.open(current)).status == .unchanged)
        #expect(try Self.files(root) == before)
        for (zip, check) in [(older, Check.importOlder), (articlesFirst, Check.importOlder), (edited, Check.importSameVersionChanged)] {
            let refused = try #require(throws: DiagnosticsError.self) { try store.importZip(ImportJob.open(zip)) }
            #expect(refused.diagnostics.map(\.id) == [check.id])
            #expect(try Self.files(root) == before)
        }
        #expect(try store.importZip(ImportJob.open(edited).forcing()).status == .replaced)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.appending(path: "staging").path).isEmpty)
    }
}
