import Foundation
import Testing

/// Every fixture under Tests/Fixtures/sources is named by its outcome (`-valid`, `-warning`,
/// `-error`). Each test asserts the exit status, the exact set of diagnostic ids (so no other
/// error or warning may appear), and where the first one points.
@Suite struct PackSourceFixtureTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var fixture: String
        var ids: [String]
        /// The end of the first diagnostic's `path:line:col`, when it has a place.
        var at: String? = nil

        var status: Int32 { fixture.hasSuffix("-error") ? 1 : 0 }
        var testDescription: String { fixture }
    }

    static let cases: [Case] = [
        Case(fixture: "minimal-valid", ids: []),
        Case(fixture: "issue-json-valid", ids: []),
        Case(fixture: "extension-mismatch-warning", ids: ["source.media-extension-mismatch"], at: "article.md:4:5"),
        Case(fixture: "unknown-key-warning", ids: ["source.unknown-key"], at: "issue.yaml:4:1"),
        Case(fixture: "date-order-warning", ids: ["source.date-order"], at: "02-b/article.md:3:7"),
        Case(fixture: "missing-issue-file-error", ids: ["source.issue-file-missing"]),
        Case(fixture: "bad-yaml-error", ids: ["source.yaml-invalid"], at: "issue.yaml:3:13"),
        // The quote opened on line 1 runs to line 4's first quote, where libyaml stops: the
        // finding points at the quote.
        Case(fixture: "unclosed-quote-error", ids: ["source.yaml-invalid"], at: "issue.yaml:1:8"),
        Case(fixture: "missing-required-field-error", ids: ["source.field-missing"], at: "issue.yaml:1:1"),
        Case(fixture: "duplicate-yaml-key-error", ids: ["source.yaml-duplicate-key"], at: "issue.yaml:4:1"),
        // `2026` and `"2026"`: one key to Galley and to JSON, so one of them must go (else
        // latest.json would hold the key twice, which validate refuses).
        Case(fixture: "duplicate-yaml-key-typed-error", ids: ["source.yaml-duplicate-key"], at: "issue.yaml:6:1"),
        Case(fixture: "bad-date-error", ids: ["source.date-invalid"], at: "issue.yaml:3:15"),
        Case(fixture: "unsafe-apple-id-error", ids: ["source.apple-id-invalid"], at: "issue.yaml:2:11"),
        Case(fixture: "unknown-placeholder-error", ids: ["body.placeholder-unknown"], at: "article.md:12:1"),
        Case(fixture: "malformed-placeholder-error", ids: ["body.placeholder-malformed"], at: "article.md:10:1"),
        Case(fixture: "missing-asset-error", ids: ["source.file-missing"], at: "article.md:4:5"),
        // Every problem of an article at once: the missing file does not hide the misspelt key.
        Case(fixture: "missing-asset-and-unknown-placeholder-error", ids: ["source.file-missing", "body.placeholder-unknown"],
             at: "article.md:4:5"),
        Case(fixture: "asset-is-folder-error", ids: ["source.file-missing"], at: "article.md:4:5"),
        Case(fixture: "asset-is-issue-folder-error", ids: ["source.file-missing"], at: "article.md:4:5"),
        Case(fixture: "path-outside-error", ids: ["source.path-outside"], at: "article.md:4:5"),
        Case(fixture: "absolute-path-error", ids: ["source.path-unsafe"], at: "article.md:4:5"),
        Case(fixture: "duplicate-asset-key-error", ids: ["source.asset-key-duplicate"], at: "article.md:5:5"),
        Case(fixture: "duplicate-id-error", ids: ["source.id-duplicate"], at: "02-b/article.md"),
        Case(fixture: "unsafe-id-error", ids: ["source.id-unsafe"], at: "article.md:3:5"),
        Case(fixture: "media-unknown-error", ids: ["source.media-unknown"], at: "article.md:4:5"),
        Case(fixture: "empty-media-error", ids: ["source.media-empty"], at: "article.md:4:5"),
        Case(fixture: "body-missing-error", ids: ["source.body-missing"], at: "articles/01-first"),
        Case(fixture: "fields-missing-error", ids: ["source.fields-missing"], at: "article.md:1"),
        Case(fixture: "order-unknown-error", ids: ["source.order-unknown"], at: "issue.yaml:4:8"),
        Case(fixture: "slug-duplicate-error", ids: ["source.slug-duplicate"], at: "articles/02-same"),
        Case(fixture: "svg-script-error", ids: ["media.svg-active"], at: "01-first/chart.svg:3"),
        Case(fixture: "long-names-error", ids: ["zip.name-length", "zip.name-length"], at: "a.png"),
        Case(fixture: "undecodable-image-warning", ids: ["pack.thumbnail-failed"], at: "article.md:4:5"),
        Case(fixture: "repetitive-field-error", ids: ["zip.ratio"], at: "latest.json"),
        Case(fixture: "local-images-valid", ids: []),
        Case(fixture: "local-image-missing-error", ids: ["source.file-missing"], at: "01-chart/article.md:6:16"),
        Case(fixture: "issue-image-kind-error", ids: ["source.issue-image-kind"], at: "issue.yaml:4:10"),
        // Validate's body checks run in pack too: pack never writes a zip `galley validate` refuses.
        Case(fixture: "script-body-error", ids: ["body.script"], at: "01-first/article.md"),
        Case(fixture: "malformed-html-warning", ids: ["body.html-malformed"], at: "01-first/article.html:5:22"),
    ]

    @Test(arguments: cases)
    func fixture(_ testCase: Case) throws {
        let source = Harness.fixtures.appending(path: "sources/\(testCase.fixture)")
        let out = try Harness.temporaryDirectory()
        let result = try Harness.galley(["pack", source.path, "--output", out.path, "--json"])
        #expect(result.status == testCase.status, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        #expect(Harness.diagnosticIDs(result).sorted() == testCase.ids.sorted(), "\(result.stdout)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path)
        if testCase.status == 0 {
            #expect(files == ["org.example.fixture.zip"])
            // What pack writes, validate passes: the gate finds no error pack let through.
            let zip = out.appending(path: "org.example.fixture.zip").path
            let validated = try Harness.galley(["validate", zip, "--json"])
            #expect(validated.status == 0, "validate refuses what pack wrote: \(validated.stdout)")
        } else {
            #expect(files.isEmpty, "a failed pack must leave nothing behind")
        }
        if let at = testCase.at {
            let list = Harness.findings(result.json)
            let location = try #require(list.first?["location"] as? [String: Any])
            var text = location["path"] as? String ?? ""
            if let line = location["line"] as? Int { text += ":\(line)" }
            if let column = location["column"] as? Int { text += ":\(column)" }
            #expect(text.hasSuffix(at), "located at \(text)")
            #expect(list.first?["hint"] as? String != nil, "every finding carries a hint")
        }
    }

    @Test func theHumanReportNamesFileLineAndHint() throws {
        let source = Harness.fixtures.appending(path: "sources/unknown-placeholder-error")
        let result = try Harness.galley(["pack", source.path, "-o", try Harness.temporaryDirectory().path])
        #expect(result.status == 1)
        #expect(result.stderr.contains(
            "unknown-placeholder-error/articles/01-first/article.md:12:1: error body.placeholder-unknown:"))
        #expect(result.stderr.contains("hint: Did you mean `photo.png`?"))
        #expect(result.stderr.contains("pack failed: 1 error, 0 warnings"))
        #expect(!result.stderr.contains("\u{1B}["), "no colour when NO_COLOR is set or not on a terminal")
    }

    /// A duplicate id names both holders, the second first (the registry keeps who holds each
    /// id, and makes the sentence only when a second claim comes).
    @Test func aDuplicateIDNamesBothHolders() throws {
        let source = Harness.fixtures.appending(path: "sources/duplicate-id-error")
        let result = try Harness.galley(["pack", source.path, "-o", try Harness.temporaryDirectory().path])
        #expect(result.status == 1)
        #expect(result.stderr.contains(
            "error source.id-duplicate: the article `02-b` has the id `5f0000000000000000000001`, which the article `01-a` already has"),
            "\(result.stderr)")
    }

    /// Cases that git cannot carry well are built on the fly.
    func makeSource(article: String, files: [String: Data] = [:]) throws -> URL {
        let root = try Harness.temporaryDirectory().appending(path: "issue")
        let folder = root.appending(path: "articles/01-first")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("title: T\napple_id: org.example.fixture\npublish_date: 2020-03-01\n".utf8)
            .write(to: root.appending(path: "issue.yaml"))
        try Data(article.utf8).write(to: folder.appending(path: "article.md"))
        for (name, data) in files { try data.write(to: folder.appending(path: name)) }
        return root
    }

    static let png = Data(base64Encoded:
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYGAAAAAEAAH2FzhVAAAAAElFTkSuQmCC")!

    @Test func aSymlinkPointingOutsideTheIssueIsNotFollowed() throws {
        let root = try makeSource(article: "---\ntitle: A\nassets: [photo.png]\n---\n<!-- [ASSET: photo.png] -->\n")
        let outside = root.deletingLastPathComponent().appending(path: "secret.png")
        try Self.png.write(to: outside)
        try FileManager.default.createSymbolicLink(
            atPath: root.appending(path: "articles/01-first/photo.png").path, withDestinationPath: outside.path)
        let result = try Harness.galley(["pack", root.path, "-o", root.deletingLastPathComponent().path, "--json"])
        #expect(result.status == 1)
        #expect(Harness.diagnosticIDs(result) == ["source.symlink-outside"])

        // A link that stays inside the issue folder is fine.
        try FileManager.default.removeItem(at: root.appending(path: "articles/01-first/photo.png"))
        try Self.png.write(to: root.appending(path: "real.png"))
        try FileManager.default.createSymbolicLink(
            atPath: root.appending(path: "articles/01-first/photo.png").path, withDestinationPath: "../../real.png")
        let inside = try Harness.galley(["pack", root.path, "-o", try Harness.temporaryDirectory().path, "--json"])
        #expect(inside.status == 0, "\(inside.stdout)")
    }

    @Test func anArticleFolderLinkedFromOutsideIsNotFollowed() throws {
        let root = try makeSource(article: "---\ntitle: A\n---\nText.\n")
        let elsewhere = root.deletingLastPathComponent().appending(path: "elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try Data("---\ntitle: B\n---\nB.\n".utf8).write(to: elsewhere.appending(path: "article.md"))
        try FileManager.default.createSymbolicLink(
            atPath: root.appending(path: "articles/02-linked").path, withDestinationPath: elsewhere.path)
        let result = try Harness.galley(["pack", root.path, "-o", try Harness.temporaryDirectory().path, "--json"])
        #expect(result.status == 1)
        #expect(Harness.diagnosticIDs(result) == ["source.symlink-outside"])
    }

    @Test(arguments: ["bad\\name.png", "tab\tname.png", "colon:name.png", "trailing.png."])
    func fileNamesThatAreUnsafeInAZipAreRefused(name: String) throws {
        let root = try makeSource(
            article: "---\ntitle: A\nassets:\n  - file: \"\(name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t"))\"\n---\nText.\n",
            files: [name: Self.png])
        let result = try Harness.galley(["pack", root.path, "-o", try Harness.temporaryDirectory().path, "--json"])
        #expect(result.status == 1, "\(result.stdout)")
        let ids = Harness.diagnosticIDs(result)
        #expect(ids == ["source.name-unsafe"] || ids == ["source.path-unsafe"], "\(ids)")
    }

    @Test func namesOutsideTheProducerProfileAreMadeSafeInTheZip() throws {
        let root = try makeSource(
            article: "---\ntitle: A\nassets: [\"Café au lait (1).png\"]\n---\n<!-- [ASSET: Café au lait (1).png] -->\n",
            files: ["Café au lait (1).png": Self.png])
        let out = try Harness.temporaryDirectory()
        let result = try Harness.galley(["pack", root.path, "-o", out.path])
        #expect(result.status == 0, "\(result.stderr)")
        let zip = out.appending(path: "org.example.fixture.zip")
        let listing = try Harness.tool("unzip", ["-Z1", zip.path]).stdout
        #expect(listing.contains("org.example.fixture/first-Caf-au-lait-1-.png"))
        #expect(try Harness.tool("python3", [Harness.checkScript.path, zip.path]).status == 0)
    }

    @Test func everyProblemIsReportedAtOnce() throws {
        let root = try makeSource(article: """
            ---
            title: A
            featured: maybe
            assets: [missing.png]
            ---
            <!-- [ASSET: nothing] -->
            """)
        let result = try Harness.galley(["pack", root.path, "-o", try Harness.temporaryDirectory().path, "--json"])
        #expect(result.status == 1)
        #expect(Set(Harness.diagnosticIDs(result)) == ["source.type-mismatch", "source.file-missing", "body.placeholder-unknown"])
    }

    /// Pictures and files a body names beside it (issue 11, point 2): an `<img>` becomes an
    /// asset (caption from alt, else title; a file already listed stays that asset), every other
    /// reference names the file as packed, remote and fragment links stay, and the zip, its
    /// validation and its preview all agree.
    @Test func localImagesBecomeAssetsAndLinksNameThePackedFiles() throws {
        let source = Harness.fixtures.appending(path: "sources/local-images-valid")
        let out = try Harness.temporaryDirectory()
        let packed = try Harness.galley(["pack", source.path, "-o", out.path + "/"])
        #expect(packed.status == 0, "\(packed.stderr)")
        let zip = out.appending(path: "org.example.fixture.zip")
        let listing = try Harness.tool("unzip", ["-Z1", zip.path]).stdout.split(separator: "\n").map(String.init)
        #expect(listing.sorted() == ["org.example.fixture/chart-chart.png", "org.example.fixture/chart-report.pdf",
                                     "org.example.fixture/latest.json", "org.example.fixture/quay-clip.mp3",
                                     "org.example.fixture/quay-gull.png", "org.example.fixture/quay-quay.png",
                                     "org.example.fixture/chart-chart-350x350.jpg", "org.example.fixture/quay-gull-350x350.jpg",
                                     "org.example.fixture/quay-quay-350x350.jpg"].sorted())
        let text = try Harness.tool("unzip", ["-p", zip.path, "org.example.fixture/latest.json"]).stdout
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let articles = try #require(manifest["articles"] as? [[String: Any]])
        func images(_ article: [String: Any]) -> [[String: Any]] {
            ((article["images"] as? [String: Any])?["ordered"] as? [[String: Any]]) ?? []
        }
        let chart = try #require(images(articles[0]).first)
        #expect(images(articles[0]).count == 1)
        #expect(chart["file_name"] as? String == "chart-chart.png" && chart["caption"] as? String == "A chart of sales")
        #expect((chart["metadata"] as? [String: Any])?["alt"] as? String == "A chart of sales")
        let body0 = try #require(articles[0]["body"] as? String)
        #expect(body0.contains("\n<!-- [ASSET: \(chart["id"] as? String ?? "?")] -->\n"))
        #expect(!body0.contains("<img"))
        #expect(body0.contains("<a href=\"chart-report.pdf#page=2\">the report</a>"))
        #expect(body0.contains("<a href=\"chart-chart.png\">the chart alone</a>"))

        let quayImages = images(articles[1])
        #expect(quayImages.map { $0["file_name"] as? String } == ["quay-quay.png", "quay-gull.png"])
        #expect(quayImages.map { $0["caption"] as? String } == ["The quay at dawn.", "A gull"])
        let body1 = try #require(articles[1]["body"] as? String)
        for image in quayImages { #expect(body1.contains("<!-- [ASSET: \(image["id"] as? String ?? "?")] -->")) }
        #expect(body1.contains("<audio controls src=\"quay-clip.mp3\"></audio>"))
        #expect(body1.contains("poster=\"quay-gull.png\""))
        #expect(body1.contains("<a href=\"https://example.com/\">Remote</a> and <a href=\"#top\">top</a>"))

        let validated = try Harness.galley(["validate", zip.path, "--json"])
        #expect(validated.status == 0)
        #expect(Harness.diagnosticIDs(validated).isEmpty, "\(validated.stdout)")
        #expect(try Harness.tool("python3", [Harness.checkScript.path, zip.path]).status == 0)

        let site = out.appending(path: "site")
        #expect(try Harness.galley(["render", zip.path, "--output", site.path]).status == 0)
        let pages = try FileManager.default.contentsOfDirectory(atPath: site.appending(path: "articles").path).sorted()
        let page = try String(contentsOf: site.appending(path: "articles/\(pages[0])"), encoding: .utf8)
        #expect(page.contains("href=\"../assets/chart-report.pdf#page=2\""))
        #expect(page.contains("src=\"../assets/chart-chart.png\""))
        #expect(FileManager.default.fileExists(atPath: site.appending(path: "assets/chart-report.pdf").path))
    }

    @Test func aMarkdownImageNameWithSpacesIsFound() throws {
        let root = try makeSource(article: "---\ntitle: A\n---\n![Sea](<sea view.png>)\n", files: ["sea view.png": Self.png])
        let out = try Harness.temporaryDirectory()
        let result = try Harness.galley(["pack", root.path, "-o", out.path, "--json"])
        #expect(result.status == 0, "\(result.stdout)")
        let text = try Harness.tool("unzip", ["-p", out.appending(path: "org.example.fixture.zip").path,
                                              "org.example.fixture/latest.json"]).stdout
        #expect(text.contains("\"file_name\": \"first-sea-view.png\""), "\(text)")
        #expect(!text.contains("<img"))
    }
}
