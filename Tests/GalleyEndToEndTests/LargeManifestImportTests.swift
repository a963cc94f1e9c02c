import Foundation
import GalleyCore
import GalleyFormats
@testable import GalleyStore
@testable import GalleyStoreSQLite
import GalleyTestSupport
import Testing

/// `galley import` of an issue whose latest.json is large against its files (3,000 articles,
/// about 10 MB of latest.json over a few small images): the articles' rows are written beside
/// the pass (`BesideRows`) by the command itself. Imported, replaced, and refused at its last
/// article, the store stays whole and checks clean, and a refusal leaves its files as they were.
@Suite struct LargeManifestImportTests {
    init() { ProcessEnvironment.configureForArchives() }

    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]
        + [UInt8](repeating: 0, count: 64) + [0xFF, 0xD9]

    /// A zip of `count` articles whose bodies make latest.json about 3.3 KB an article; the last
    /// article's image names `lastImage`.
    static func zip(at url: URL, count: Int = 3_000, lastUpdated: String = "2020-03-01T00:00:00.000+0000", lastImage: String = "photo.jpg") throws {
        let top = "big-issue"
        // Words drawn at random (a fixed seed): a repeated sentence would compress past the
        // container checks' 100:1 (a zip bomb's ratio).
        let words = "harbour ferry night light keeper tide quay crane fog horn log book storm lamp gull captain deck ramp".split(separator: " ")
        var generator = SeededGenerator(state: 7)
        var json = """
            {"global_id": "5f00000000000000000000aa", "apple_id": "\(top)", "title": "Big", "description": "",
             "last_updated": "\(lastUpdated)", "display_date": "March 2020", "publish_date": "03/01/2020", "metadata": {},
             "images": {"ordered": [{"id": "cover", "caption": "", "source": "", "file_name": "cover.jpg", "crop_350_350": "cover.jpg"}]},
             "articles": [
            """
        for i in 0..<count {
            let file = i == count - 1 ? lastImage : "photo.jpg"
            let id = String(format: "6b%022x", i + 1)
            let date = String(format: "2020-02-%02dT%02d:%02d:00.000+0000", 28 - i / 1440, 23 - (i / 60) % 24, 59 - i % 60)
            let paragraph = (0..<450).map { _ in words[generator.below(words.count)] }.joined(separator: " ")
            if i > 0 { json += ",\n" }
            json += """
                {"global_id": "\(id)", "title": "Article \(i + 1)", "body": "<p>\(paragraph) Word\(i + 1)word.</p>\\n<!-- [ASSET: p\(i + 1)] -->\\n",
                 "description": "", "url": "", "section": "", "author_name": "", "source": "", "dek": "", "author_url": "",
                 "author_bio": "", "keywords": "", "commentary": "", "type": "article", "date_last_updated": "\(date)",
                 "meta": {"published": true}, "customMeta": {}, "metadata": {},
                 "images": {"ordered": [{"id": "p\(i + 1)", "caption": "", "source": "", "file_name": "\(file)", "crop_350_350": "\(file)"}]}}
                """
        }
        json += "]}\n"
        let writer = try ZipWriter(url: url, hashing: false, allowZip64: false)
        try writer.addData(name: "\(top)/latest.json", Array(json.utf8), mtime: 0, compression: .deflate)
        try writer.addData(name: "\(top)/cover.jpg", jpeg, mtime: 0, compression: .store)
        try writer.addData(name: "\(top)/photo.jpg", jpeg, mtime: 0, compression: .store)
        _ = try writer.finish()
    }

    @Test func aLargeLatestJsonImportsReplacesAndIsRefusedWhole() throws {
        let work = try Harness.temporaryDirectory()
        let store = work.appending(path: "store").path
        let first = work.appending(path: "big-issue.zip")
        try Self.zip(at: first)
        // Large enough that the command writes the rows beside its pass.
        let opened = try ImportJob.open(first.path)
        #expect(BesideRows.pays(manifestBytes: opened.opened.manifestBytes, zipBytes: opened.opened.facts.declaredBytes))

        let imported = try Harness.galley(["import", first.path, "--store", store, "--json", "--verbose"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("big-issue: the articles' rows were written beside the extraction"), "\(imported.stderr)")
        let result = try #require(Harness.imports(imported).first)
        #expect(result["status"] as? String == "imported" && result["articles"] as? Int == 3_000 && result["assets"] as? Int == 3_001)
        #expect(try Harness.galley(["store", "check", "--store", store]).status == 0)
        let found = try Harness.galley(["search", "word2999word", "--store", store, "--json"])
        #expect(found.status == 0 && found.stdout.contains(String(format: "6b%022x", 2_999)), "\(found.stdout)")
        let before = try HostileInputTests.content(URL(fileURLWithPath: store))

        // The next version, refused at its last article (an image file the zip lacks): the
        // rows written for the 2,999 before it are rolled back.
        let refusedZip = work.appending(path: "refused/big-issue.zip")
        try FileManager.default.createDirectory(at: refusedZip.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Self.zip(at: refusedZip, lastUpdated: "2020-04-01T00:00:00.000+0000", lastImage: "missing.jpg")
        let refused = try Harness.galley(["import", refusedZip.path, "--store", store])
        #expect(refused.status == 1 && refused.stderr.contains("missing.jpg"), "\(refused.stderr)")
        #expect(try HostileInputTests.content(URL(fileURLWithPath: store)) == before, "the store is as it was")

        // The next version, whole: it replaces the first.
        let next = work.appending(path: "next/big-issue.zip")
        try FileManager.default.createDirectory(at: next.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Self.zip(at: next, lastUpdated: "2020-04-01T00:00:00.000+0000")
        let replaced = try Harness.galley(["import", next.path, "--store", store, "--json"])
        #expect(Harness.imports(replaced).first?["status"] as? String == "replaced", "\(replaced.stderr)")
        _ = try HostileInputTests.content(URL(fileURLWithPath: store))  // the write-ahead log merged, as after any import
        #expect(try Harness.galley(["store", "check", "--store", store]).status == 0)
        let articles = try Harness.galley(["articles", "--issue", "big-issue", "--store", store, "--json", "--limit", "5000"])
        #expect(articles.stdout.components(separatedBy: "\"global_id\"").count - 1 >= 3_000, "\(articles.stderr)")
    }

    /// An issue whose latest.json is small against its files keeps the rows after the pass,
    /// where they cost the busy pass nothing.
    @Test func aSmallLatestJsonKeepsTheRowsAfterThePass() throws {
        let store = try Harness.temporaryDirectory().appending(path: "store").path
        let imported = try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", store, "--verbose"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("checked, extracted and written"), "\(imported.stderr)")
        #expect(!imported.stderr.contains("written beside the extraction"), "\(imported.stderr)")
    }
}
