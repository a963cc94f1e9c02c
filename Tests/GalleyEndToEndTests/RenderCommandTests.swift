import Foundation
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit

@Suite struct RenderCommandTests {
    init() { ProcessEnvironment.configureForArchives() }

    /// Every src, poster and href of a page that points inside the site.
    func references(in html: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: ##"(?:src|poster|href)="([^"#:]+)""##)
        return pattern.matches(in: html, range: NSRange(html.startIndex..., in: html)).compactMap {
            Range($0.range(at: 1), in: html).map { String(html[$0]) }
        }
    }

    func checkSite(_ site: URL) throws {
        let index = try String(contentsOf: site.appending(path: "index.html"), encoding: .utf8)
        var pages = [site.appending(path: "index.html")]
        for href in references(in: index) where href.hasPrefix("articles/") { pages.append(site.appending(path: href)) }
        #expect(pages.count == 5, "the index links every article")
        for page in pages {
            let html = try String(contentsOf: page, encoding: .utf8)
            #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
            let inspection = HTMLInspector.inspect(html)
            #expect(inspection.problems.isEmpty, "\(page.lastPathComponent): \(inspection.problems)")
            #expect(inspection.scripts.isEmpty && inspection.eventHandlers.isEmpty)
            for reference in references(in: html) {
                let target = page.deletingLastPathComponent().appending(path: reference.removingPercentEncoding ?? reference)
                #expect(FileManager.default.fileExists(atPath: target.path), "\(page.lastPathComponent) → \(reference)")
            }
        }
    }

    @Test func aPreviewSiteFromTheZipAndFromTheSourceWorksOffline() throws {
        let out = try Harness.temporaryDirectory()
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", out.path]).status == 0)
        let zipSite = out.appending(path: "from-zip")
        let fromZip = try Harness.galley(["render", out.appending(path: "com.example.harbour.2026-01.zip").path, "-o", zipSite.path])
        #expect(fromZip.status == 0, "\(fromZip.stderr)")
        try checkSite(zipSite)
        let sourceSite = out.appending(path: "from-source")
        let fromSource = try Harness.galley(["render", Harness.example.path, "-o", sourceSite.path, "--json"])
        #expect(fromSource.status == 0, "\(fromSource.stderr)")
        #expect(fromSource.json?["articles"] as? Int == 4)
        try checkSite(sourceSite)
        // The same issue renders to the same pages either way.
        let pages = try FileManager.default.contentsOfDirectory(atPath: zipSite.appending(path: "articles").path).sorted()
        for page in pages {
            #expect(try Data(contentsOf: zipSite.appending(path: "articles/\(page)"))
                == Data(contentsOf: sourceSite.appending(path: "articles/\(page)")), "\(page)")
        }
        // An existing site is replaced only with --force.
        #expect(try Harness.galley(["render", Harness.example.path, "-o", sourceSite.path]).status == 2)
        #expect(try Harness.galley(["render", Harness.example.path, "-o", sourceSite.path, "--force"]).status == 0)
    }

    /// Every page of the example's preview site, from the source and from its zip, is valid
    /// HTML5 to html5lib's strict parser (the WHATWG algorithm, every parse error raised): a
    /// figure an asset placeholder or a Markdown image expands to mid-paragraph was inside a
    /// `<p>`, which HTML5 closes early, leaving a stray `</p>`.
    @Test func everyRenderedPageIsValidHTML5() throws {
        let out = try Harness.temporaryDirectory()
        let source = out.appending(path: "source")
        try FileManager.default.copyItem(at: Harness.example, to: source)
        // Markdown images too: one alone in its paragraph, one amid text.
        let article = source.appending(path: "articles/01-the-lighthouse-keepers/article.md")
        let text = try String(contentsOf: article, encoding: .utf8)
        try Data((text + "\n![The lamp room](lamp-room.jpg)\n\nA line with an inline ![lamp](lamp-room.jpg) picture.\n").utf8).write(to: article)
        #expect(try Harness.galley(["pack", source.path, "-o", out.path + "/", "-q"]).status == 0)
        var pages: [String] = []
        for input in [source.path, out.appending(path: "com.example.harbour.2026-01.zip").path] {
            let site = out.appending(path: "site-\(pages.count)")
            #expect(try Harness.galley(["render", input, "-o", site.path, "-q"]).status == 0)
            let articles = try FileManager.default.contentsOfDirectory(atPath: site.appending(path: "articles").path)
            pages += [site.appending(path: "index.html").path] + articles.map { site.appending(path: "articles/\($0)").path }
        }
        let page = out.appending(path: "page.html").path
        #expect(try Harness.galley(["render", source.path, "--article", "the-lighthouse-keepers", "--page", "-o", page, "-q"]).status == 0)
        pages.append(page)
        #expect(pages.count == 11)
        let checked = try Harness.tool("python3", [Harness.root.appending(path: "Tests/Support/check_html5.py").path] + pages)
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
    }

    /// pack and render count an issue's assets alike (latest.json's records: render said 16,
    /// its files with thumbnails and posters, where pack said 8); render names its files apart.
    @Test func packAndRenderCountTheSameAssets() throws {
        let out = try Harness.temporaryDirectory()
        let packed = try Harness.galley(["pack", Harness.example.path, "-o", out.path + "/", "--json"])
        let assets = try #require(packed.json?["assets"] as? Int)
        for input in [Harness.example.path, out.appending(path: "com.example.harbour.2026-01.zip").path] {
            let site = out.appending(path: "site-\(UUID().uuidString)")
            let rendered = try Harness.galley(["render", input, "-o", site.path, "--json"])
            #expect(rendered.json?["assets"] as? Int == assets, "\(input): \(rendered.stdout)")
            let files = try #require(rendered.json?["files"] as? Int)
            #expect(files == (try FileManager.default.contentsOfDirectory(atPath: site.appending(path: "assets").path)).count && files > assets)
            try SyncCommandTests.expectSchemas([("render", rendered.stdout)])
        }
        let words = try Harness.galley(["render", Harness.example.path, "-o", out.appending(path: "words").path])
        #expect(words.stdout.hasPrefix("rendered 4 articles and \(assets) assets ("), "\(words.stdout)")
    }

    @Test func oneMarkdownArticleAsAPageFromTheSource() throws {
        let out = try Harness.temporaryDirectory()
        let file = out.appending(path: "keepers.html")
        let result = try Harness.galley([
            "render", Harness.example.path, "--article", "the-lighthouse-keepers", "--page", "-o", file.path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        // Written to a file, it says so (as a site's render does); -q says nothing; to standard
        // output, the HTML alone.
        #expect(result.stdout == "rendered article the-lighthouse-keepers as a page into \(file.path)\n", "\(result.stdout)")
        let quiet = try Harness.galley(["render", Harness.example.path, "--article", "the-lighthouse-keepers", "-o",
                                        out.appending(path: "body.html").path, "-q"])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty, "\(quiet.stdout)")
        let printed = try Harness.galley(["render", Harness.example.path, "--article", "the-lighthouse-keepers"])
        #expect(!printed.stdout.contains("rendered article"), "\(printed.stdout.suffix(200))")
        let html = try String(contentsOf: file, encoding: .utf8)
        #expect(html.contains("<h1>The Lighthouse Keepers</h1>"))
        #expect(html.contains("<strong>Marta Lind</strong>"))
        #expect(html.contains("<table>"))
        // URLs point from the output folder at the source files.
        let src = try #require(references(in: html).first { $0.hasSuffix("lamp-room.jpg") })
        #expect(FileManager.default.fileExists(atPath: out.appending(path: src).standardizedFileURL.path), "\(src)")
        #expect(HTMLInspector.inspect(html).problems.isEmpty)
    }

    @Test func aBodyOnStandardInputWithADumplingStyleAndAssetBase() throws {
        let zipDir = try Harness.temporaryDirectory()
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", zipDir.path]).status == 0)
        let zip = zipDir.appending(path: "com.example.harbour.2026-01.zip").path
        let bodyFile = zipDir.appending(path: "body.html")
        try Data("<p><!-- [ASSET: log-book] --></p>\n<!-- [ASSET: missing] -->\n".utf8).write(to: bodyFile)
        let result = try Harness.run(URL(fileURLWithPath: "/bin/sh"), [
            "-c", "exec \"$0\" render \"$1\" --stdin --style dumpling --asset-base file:///issue/ < \"$2\"",
            Harness.galley.path, zip, bodyFile.path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("<div class='article_image'><img src='file:///issue/the-lighthouse-keepers-keepers-log.jpg' alt='Tap to enlarge image' />"))
        #expect(result.stdout.contains("</div></div><p></p>\n"))
        #expect(result.stderr.contains("warning render.asset-missing"))

        let strict = try Harness.run(URL(fileURLWithPath: "/bin/sh"), [
            "-c", "exec \"$0\" render \"$1\" --stdin --on-missing error < \"$2\"", Harness.galley.path, zip, bodyFile.path,
        ])
        #expect(strict.status == 1)
        let kept = try Harness.run(URL(fileURLWithPath: "/bin/sh"), [
            "-c", "exec \"$0\" render \"$1\" --stdin --on-missing keep < \"$2\"", Harness.galley.path, zip, bodyFile.path,
        ])
        #expect(kept.stdout.contains("<!-- [ASSET: missing] -->"))
    }

    @Test func hostileZipsAreRefusedBeforeAnythingIsWritten() throws {
        let out = try Harness.temporaryDirectory()
        for fixture in ["zip-slip-dotdot-error.zip", "symlink-error.zip", "overlap-bomb-error.zip"] {
            let site = out.appending(path: fixture)
            let result = try Harness.galley(["render", Harness.fixtures.appending(path: "zips/\(fixture)").path, "-o", site.path])
            #expect(result.status == 1, "\(fixture)")
            #expect(!FileManager.default.fileExists(atPath: site.path))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty, "no staging folder left behind")
    }

    /// Damage only reading finds (a CRC, deflate data, a size that lies) is refused as validate
    /// refuses it: exit 1 with validate's finding at the entry, and no site left. (Before, it
    /// was exit 2, "could not run", which says the user's command was wrong.)
    @Test func damagedContentIsAFindingAndNoSiteIsLeft() throws {
        let out = try Harness.temporaryDirectory()
        for (fixture, id, entry) in [("bad-crc-error", "zip.crc", "cover.jpg"), ("bad-deflate-error", "zip.data", "cover.jpg"),
                                     ("size-lie-error", "zip.size-mismatch", "photo-1.jpg")] {
            let site = out.appending(path: fixture)
            let result = try Harness.galley(["render", Harness.fixtures.appending(path: "zips/\(fixture).zip").path, "-o", site.path, "--json"])
            #expect(result.status == 1, "\(fixture): \(result.stderr)")
            #expect(Harness.diagnosticIDs(result) == [id], "\(fixture): \(result.stdout)")
            let location = Harness.findings(result.json).first?["location"] as? [String: Any]
            #expect((location?["path"] as? String)?.hasSuffix("\(fixture).zip!\(fixture)/\(entry)") == true, "\(fixture): \(result.stdout)")
            #expect(!FileManager.default.fileExists(atPath: site.path))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty, "no staging folder left behind")
        // A latest.json that cannot be read to its end, likewise (it was exit 2 too).
        let folder = try Harness.temporaryDirectory()
        for (text, id, at) in [("{\"title\": \"A\",\n  \"articles\": [}", "manifest.json", ":2:16"), ("[1, 2]", "manifest.type", ":1:1")] {
            let manifest = folder.appending(path: "latest.json")
            try Data(text.utf8).write(to: manifest)
            let result = try Harness.galley(["render", manifest.path, "-o", folder.appending(path: "site").path, "--json"])
            #expect(result.status == 1, "\(text): \(result.stderr)")
            #expect(Harness.diagnosticIDs(result) == [id], "\(text): \(result.stdout)")
            let location = Harness.findings(result.json).first?["location"] as? [String: Any]
            let place = "\(location?["path"] as? String ?? ""):\(location?["line"] as? Int ?? 0):\(location?["column"] as? Int ?? 0)"
            #expect(place.hasSuffix("latest.json" + at), "\(place)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["latest.json"], "no site left")
    }

    /// An SVG that runs script is refused as pack, validate and import refuse it (it was copied
    /// into the site as it was); a clean SVG and a malformed one still render.
    @Test func anSVGThatRunsScriptIsRefusedAndNoSiteIsLeft() throws {
        let out = try Harness.temporaryDirectory()
        for fixture in ["svg-script-error", "svg-onload-error", "svg-javascript-entity-error"] {
            let site = out.appending(path: fixture)
            let result = try Harness.galley(["render", Harness.fixtures.appending(path: "zips/\(fixture).zip").path, "-o", site.path, "--json"])
            #expect(result.status == 1, "\(fixture): \(result.stderr)")
            #expect(Harness.diagnosticIDs(result) == ["media.svg-active"], "\(fixture): \(result.stdout)")
            let location = Harness.findings(result.json).first?["location"] as? [String: Any]
            #expect((location?["path"] as? String)?.hasSuffix("\(fixture).zip!\(fixture)/chart.svg") == true, "\(fixture): \(result.stdout)")
            #expect(!FileManager.default.fileExists(atPath: site.path))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty, "no staging folder left behind")
        for fixture in ["svg-clean-valid", "svg-malformed-warning"] {
            let site = out.appending(path: fixture)
            let result = try Harness.galley(["render", Harness.fixtures.appending(path: "zips/\(fixture).zip").path, "-o", site.path])
            #expect(result.status == 0, "\(fixture): \(result.stderr)")
            #expect(FileManager.default.fileExists(atPath: site.appending(path: "assets/chart.svg").path), "\(fixture)")
        }
    }

    /// A folder holding the example packed (its zip), and the zip's latest.json unpacked
    /// elsewhere.
    static func packedExample() throws -> (folder: URL, latest: URL) {
        let folder = try Harness.temporaryDirectory()
        let zip = folder.appending(path: "com.example.harbour.2026-01.zip")
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", zip.path]).status == 0)
        let unzipped = try Harness.temporaryDirectory()
        #expect(try Harness.tool("unzip", ["-q", zip.path, "-d", unzipped.path]).status == 0)
        return (folder, unzipped.appending(path: "com.example.harbour.2026-01/latest.json"))
    }

    /// Render reads a manifest by its content, whatever its name, and says what to do with a
    /// folder of zips instead of treating it as a broken source.
    @Test func inputsAreRecognisedByContent() throws {
        let (folder, latest) = try Self.packedExample()
        let manifest = folder.appending(path: "manifest.data")
        try FileManager.default.copyItem(at: latest, to: manifest)
        let site = try Harness.galley(["render", manifest.path, "-o", folder.appending(path: "site").path])
        #expect(site.status == 0, "\(site.stderr)")

        let zips = try Harness.galley(["render", folder.path, "-o", folder.appending(path: "site2").path])
        #expect(zips.status == 2)
        #expect(zips.stderr.contains("holds issue zips"), "\(zips.stderr)")
    }

    /// A global id far longer than a file name may be (found by scripts/fuzz.py manifests):
    /// the site is made, its page named by the id's first 100 bytes, and the index links it.
    @Test func aVeryLongGlobalIDStillGivesItsArticleAPage() throws {
        let (folder, latest) = try Self.packedExample()
        let original = try Data(contentsOf: latest)
        var root = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
        var articles = try #require(root["articles"] as? [[String: Any]])
        articles[0]["global_id"] = String(repeating: "x", count: 10_000)
        root["articles"] = articles
        let manifest = folder.appending(path: "latest.json")
        try JSONSerialization.data(withJSONObject: root).write(to: manifest)
        let site = folder.appending(path: "site")
        let result = try Harness.galley(["render", manifest.path, "-o", site.path])
        #expect(result.status == 0 || result.status == 1, "\(result.stderr)")
        let pages = try FileManager.default.contentsOfDirectory(atPath: site.appending(path: "articles").path).sorted()
        #expect(pages.count == 4)
        #expect(pages.allSatisfy { $0.utf8.count <= 255 })
        #expect(pages.contains("001-" + String(repeating: "x", count: 100) + ".html"), "\(pages)")
        let index = try String(contentsOf: site.appending(path: "index.html"), encoding: .utf8)
        for page in pages { #expect(index.contains("articles/\(page)"), "\(page)") }
    }

    @Test func badArguments() throws {
        #expect(try Harness.galley(["render", Harness.example.path]).status == 2)
        #expect(try Harness.galley(["render", Harness.example.path, "--article", "x", "--style", "fancy"]).status == 2)
        #expect(try Harness.galley(["render", Harness.example.path, "--article", "no-such-article"]).status == 2)
        #expect(try Harness.galley(["render", Harness.example.path, "--article", "letters", "--pattern", "(no-group)"]).status == 2)
    }
}

@Suite struct RenderTemplateTests {
    init() { ProcessEnvironment.configureForArchives() }

    @Test func publisherTemplatesShapeAssetsAndPagesAndStillEscape() throws {
        let source = try Harness.copy(Harness.example)
        // A caption that would run if it were not escaped.
        let article = source.appending(path: "articles/03-harbour-in-motion/article.md")
        var text = try String(contentsOf: article, encoding: .utf8)
        text = text.replacingOccurrences(of: "caption: This week's tides.", with: "caption: \"<script>alert(1)</script>' onerror='x\"")
        try Data(text.utf8).write(to: article)
        let templates = Harness.root.appending(path: "Examples/templates")
        let site = try Harness.temporaryDirectory().appending(path: "site")
        let result = try Harness.galley([
            "render", source.path, "-o", site.path, "--template", templates.appending(path: "asset.mustache").path,
            "--page-template", templates.appending(path: "page.mustache").path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let pages = try FileManager.default.contentsOfDirectory(atPath: site.appending(path: "articles").path).sorted()
        let harbour = try String(contentsOf: site.appending(path: "articles/\(pages[2])"), encoding: .utf8)
        #expect(harbour.contains("<body class=\"harbour\">"))
        #expect(harbour.contains("<div class=\"harbour-video\"><video controls poster=\"../assets/harbour-in-motion-harbour-poster.jpg\""))
        #expect(harbour.contains("<div class=\"harbour-photo\"><img src=\"../assets/harbour-in-motion-tide-chart.gif\""))
        #expect(!harbour.contains("<script>"))
        let inspection = HTMLInspector.inspect(harbour)
        #expect(inspection.scripts.isEmpty && inspection.eventHandlers.isEmpty)
        #expect(inspection.problems.isEmpty, "\(inspection.problems)")
    }

    @Test func aBrokenTemplateIsAClearError() throws {
        let file = try Harness.temporaryDirectory().appending(path: "bad.mustache")
        try Data("{{#image}}never closed".utf8).write(to: file)
        let result = try Harness.galley(["render", Harness.example.path, "--article", "letters", "--template", file.path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("the template does not parse"))
    }
}

@Suite struct RenderLargeSiteTests {
    init() { ProcessEnvironment.configureForArchives() }

    /// Pages are written in batches; every batch must know the issue's title.
    @Test func everyPageOfALargeSiteLinksBackToTheIssue() throws {
        let root = try Harness.temporaryDirectory().appending(path: "issue")
        try FileManager.default.createDirectory(at: root.appending(path: "articles"), withIntermediateDirectories: true)
        try Data("title: Big Issue\napple_id: org.example.big\npublish_date: 2020-03-01\n".utf8)
            .write(to: root.appending(path: "issue.yaml"))
        for i in 1...70 {
            let folder = root.appending(path: "articles/\(String(format: "%03d", i))-a\(i)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("---\ntitle: Article \(i)\n---\nText \(i).\n".utf8).write(to: folder.appending(path: "article.md"))
        }
        let out = try Harness.temporaryDirectory()
        let zipResult = try Harness.galley(["pack", root.path, "-o", out.path])
        #expect(zipResult.status == 0, "\(zipResult.stderr)")
        for input in [root.path, out.appending(path: "org.example.big.zip").path] {
            let site = try Harness.temporaryDirectory().appending(path: "site")
            #expect(try Harness.galley(["render", input, "-o", site.path]).status == 0)
            let pages = try FileManager.default.contentsOfDirectory(atPath: site.appending(path: "articles").path)
            #expect(pages.count == 70)
            for page in pages {
                let html = try String(contentsOf: site.appending(path: "articles/\(page)"), encoding: .utf8)
                #expect(html.contains("← Big Issue</a>"), "\(page) from \(input)")
            }
        }
    }
}

/// A site is rendered as the source's articles are built: an error found late (the last of 70
/// articles repeats the first one's id, after 64 pages were written) still leaves no site and
/// nothing of its staging behind; what pack warns about is shown, as pack shows it.
@Suite struct RenderSourceFindingsTests {
    @Test func packsWarningsAboutTheSourceAreShown() throws {
        let source = Harness.fixtures.appending(path: "sources/date-order-warning")
        let site = try Harness.temporaryDirectory().appending(path: "site")
        let result = try Harness.galley(["render", source.path, "-o", site.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning source.date-order"), "\(result.stderr)")
        let json = try Harness.galley(["render", source.path, "-o", site.path, "--force", "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let ids = (document["warnings"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        #expect(ids == ["source.date-order"])
    }

    @Test func anErrorInTheLastArticleLeavesNoSite() throws {
        let source = try Harness.temporaryDirectory().appending(path: "issue")
        try FileManager.default.createDirectory(at: source.appending(path: "articles"), withIntermediateDirectories: true)
        try Data("title: Late\napple_id: org.example.late\npublish_date: 2026-01-01\n".utf8).write(to: source.appending(path: "issue.yaml"))
        for index in 1...70 {
            let folder = source.appending(path: "articles/\(String(format: "%03d", index))-a\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let id = index == 1 || index == 70 ? "id: 5f0000000000000000000001\n" : ""
            try Data("---\ntitle: Article \(index)\n\(id)---\nText \(index).\n".utf8).write(to: folder.appending(path: "article.md"))
        }
        let parent = source.deletingLastPathComponent().appending(path: "out")
        let site = parent.appending(path: "site")
        let result = try Harness.galley(["render", source.path, "-o", site.path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("5f0000000000000000000001"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: site.path))
        #expect(!FileManager.default.fileExists(atPath: parent.path), "the folders made for the site are removed again")
    }
}

/// The preview site's reading order: every article page links the previous and next article,
/// also across the batches the site is written in (64 pages at a time).
@Suite struct PreviewNavigationTests {
    @Test func pagesLinkTheirNeighboursInIssueOrder() throws {
        let source = try Harness.temporaryDirectory().appending(path: "issue")
        try FileManager.default.createDirectory(at: source.appending(path: "articles"), withIntermediateDirectories: true)
        try Data("title: Long\napple_id: org.example.long\npublish_date: 2026-01-01\n".utf8).write(to: source.appending(path: "issue.yaml"))
        let count = 70
        for index in 1...count {
            let folder = source.appending(path: "articles/\(String(format: "%03d", index))-a\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("---\ntitle: Article \(index)\n---\nText \(index).\n".utf8).write(to: folder.appending(path: "article.md"))
        }
        let site = source.deletingLastPathComponent().appending(path: "site")
        #expect(try Harness.galley(["render", source.path, "-o", site.path]).status == 0)
        let pages = try FileManager.default.contentsOfDirectory(atPath: site.appending(path: "articles").path).sorted()
        #expect(pages.count == count)
        for (index, page) in pages.enumerated() {
            let html = try String(contentsOf: site.appending(path: "articles/\(page)"), encoding: .utf8)
            let previous = index > 0 ? "<a rel=\"prev\" href=\"\(pages[index - 1])\">← Article \(index)</a>" : nil
            let next = index < count - 1 ? "<a rel=\"next\" href=\"\(pages[index + 1])\">Article \(index + 2) →</a>" : nil
            #expect(html.contains("rel=\"prev\"") == (previous != nil) && previous.map(html.contains) ?? true, "\(page)")
            #expect(html.contains("rel=\"next\"") == (next != nil) && next.map(html.contains) ?? true, "\(page)")
        }
    }
}
