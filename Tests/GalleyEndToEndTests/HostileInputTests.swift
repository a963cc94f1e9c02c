import Foundation
import Testing
@testable import GalleyFormats

/// The second pass of hostile input (issue #10): each hole found by trying to break Galley, with
/// the fixture or input that showed it and the answer it must get now. Fixtures are named by
/// their expected outcome; each test asserts the expected finding id and, where it matters, that
/// nothing was written.
@Suite struct HostileInputTests {
    static let bomb = Harness.fixtures.appending(path: "sources/yaml-alias-bomb-error")

    /// Hundreds of missing files beside a thousand others: each missing file's "did you mean"
    /// read the whole folder and compared every name with it, twice, for minutes at 3,000 of
    /// each (2026-11-29). A folder of more than 1,000 entries now gives no suggestion; a small
    /// one still does.
    @Test(.timeLimit(.minutes(1)))
    func missingFilesInAFolderOfThousandsAreReportedWithoutAHang() throws {
        let root = try Harness.copy(Harness.fixtures.appending(path: "sources/minimal-valid"))
        let crowded = root.appending(path: "articles/01-first")
        for number in 0..<1_200 {
            try Data("x".utf8).write(to: crowded.appending(path: "file-\(number)-with-a-longer-name.txt"))
        }
        let body = (0..<400).map { "<img src=\"missing-picture-number-\($0).png\">\n" }.joined()
        try Data("---\ntitle: First\n---\n\(body)".utf8).write(to: crowded.appending(path: "article.md"))
        let small = root.appending(path: "articles/03-third")
        try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: crowded.appending(path: "photo.png"), to: small.appending(path: "photo.png"))
        try Data("---\ntitle: Third\n---\n<img src=\"phot.png\">\n".utf8).write(to: small.appending(path: "article.md"))

        let result = try Harness.galley(["validate", root.path, "--json"])
        #expect(result.status == 1)
        let diagnostics = (result.json?["inputs"] as? [[String: Any]])?.first?["diagnostics"] as? [[String: Any]] ?? []
        #expect(diagnostics.count == 401)
        #expect(diagnostics.allSatisfy { $0["id"] as? String == "source.file-missing" })
        let hints = diagnostics.compactMap { $0["hint"] as? String }
        #expect(hints.filter { $0 == "Did you mean `photo.png`?" }.count == 1)
        #expect(hints.filter { $0.hasPrefix("Check the spelling") }.count == 400)
    }

    @Test func aYAMLAliasBombIsRefusedAtOnceByValidateAndPack() throws {
        let validate = try Harness.galley(["validate", Self.bomb.path, "--format", "json"])
        #expect(validate.status == 1)
        #expect(Harness.diagnosticIDs(validate) == ["source.yaml-expansion"])
        let out = try Harness.temporaryDirectory()
        let pack = try Harness.galley(["pack", Self.bomb.path, "-o", out.path, "--json"])
        #expect(pack.status == 1)
        #expect(Harness.diagnosticIDs(pack) == ["source.yaml-expansion"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
    }

    @Test func aYAMLAliasBombInFrontMatterOrTooDeepIsRefused() throws {
        let source = try Harness.copy(Harness.fixtures.appending(path: "sources/minimal-valid"))
        let article = source.appending(path: "articles/01-first/article.md")
        let levels = (1...8).map { level in "  l\(level): &l\(level) [" + Array(repeating: "*l\(level - 1)", count: 9).joined(separator: ",") + "]" }
        try Data(("---\ntitle: Laughs\ncustom_meta:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
            + levels.joined(separator: "\n") + "\n---\nText.\n").utf8).write(to: article)
        #expect(Harness.diagnosticIDs(try Harness.galley(["validate", source.path, "--format", "json"])) == ["source.yaml-expansion"])

        let deep = String(repeating: "[", count: 80) + String(repeating: "]", count: 80)
        try Data("---\ntitle: Deep\ncustom_meta: \(deep)\n---\nText.\n".utf8).write(to: article)
        let result = try Harness.galley(["validate", source.path, "--format", "json"])
        #expect(Harness.diagnosticIDs(result) == ["source.yaml-expansion"])
        #expect(result.stdout.contains("deeper than 64"))
    }

    /// Many plain keys pass the same bound as an alias bomb; the message says what it counted
    /// and the hint does not blame aliases the file does not have.
    @Test func tooManyPlainFrontMatterKeysSayWhatWasCounted() throws {
        let source = try Harness.copy(Harness.fixtures.appending(path: "sources/minimal-valid"))
        let article = source.appending(path: "articles/01-first/article.md")
        let keys = (0..<60_000).map { "  k\($0): v" }.joined(separator: "\n")
        try Data("---\ntitle: Keys\ncustom_meta:\n\(keys)\n---\nText.\n".utf8).write(to: article)
        let result = try Harness.galley(["validate", source.path, "--format", "json"])
        #expect(result.status == 1)
        #expect(Harness.diagnosticIDs(result) == ["source.yaml-expansion"])
        let finding = ((result.json?["inputs"] as? [[String: Any]])?.first?["diagnostics"] as? [[String: Any]])?.first
        #expect((finding?["message"] as? String)?.contains("more than 100,000 keys, values and list items") == true, "\(result.stdout)")
        #expect((finding?["message"] as? String)?.contains("aliases of aliases") == false)
        #expect((finding?["hint"] as? String)?.contains("front matter") == true)
    }

    @Test func aGalleyYmlAliasBombIsAnErrorNotAHang() throws {
        let folder = try Harness.temporaryDirectory()
        let text = try String(contentsOf: Self.bomb.appending(path: "issue.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "metadata:", with: "checks:")
        try Data(text.utf8).write(to: folder.appending(path: ".galley.yml"))
        let result = try Harness.galley(["validate", Harness.fixtures.appending(path: "zips/example-valid.zip").path], in: folder)
        #expect(result.status == 2)
        #expect(result.stderr.contains("more than 100,000 keys, values and list items"))
    }

    /// Imports `zip` into a store that already holds the example, expecting a refusal with
    /// `id`, and checks that the store's files are byte for byte what they were.
    func expectImportRefused(_ zip: URL, id: String) throws {
        let work = try Harness.temporaryDirectory()
        let store = work.appending(path: "store")
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", store.path]).status == 0)
        let before = try Harness.snapshot(store.path)
        let result = try Harness.galley(["import", zip.path, "--store", store.path, "--json"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let outcome = Harness.imports(result).first
        #expect(outcome?["status"] as? String == "refused")
        #expect((outcome?["diagnostics"] as? [[String: Any]])?.compactMap { $0["id"] as? String }.contains(id) == true, "\(result.stdout)")
        #expect(try Harness.snapshot(store.path) == before)
    }

    @Test func aKeyGivenTwiceAnywhereInLatestJsonIsAnErrorInValidateAndImport() throws {
        let zip = Harness.fixtures.appending(path: "zips/duplicate-key-error.zip")
        let result = try Harness.galley(["validate", zip.path, "--format", "json"])
        #expect(result.status == 1)
        #expect(Harness.diagnosticIDs(result) == ["manifest.duplicate-key"])
        try expectImportRefused(zip, id: "manifest.duplicate-key")
    }

    @Test func anSVGThatRunsScriptIsRefusedByPackValidateAndImport() throws {
        for name in ["svg-script-error", "svg-onload-error", "svg-javascript-entity-error"] {
            try expectImportRefused(Harness.fixtures.appending(path: "zips/\(name).zip"), id: "media.svg-active")
        }
        // An SVG the manifest does not list is served all the same: it is checked too.
        let zip = Harness.fixtures.appending(path: "zips/svg-script-error.zip")
        let listed = try Harness.galley(["validate", zip.path])
        #expect(listed.stdout.contains("chart.svg:4: error media.svg-active: `chart.svg` carries active content: <script> (line 4)"))

        let source = Harness.fixtures.appending(path: "sources/svg-script-error")
        let out = try Harness.temporaryDirectory()
        let pack = try Harness.galley(["pack", source.path, "-o", out.path])
        #expect(pack.status == 1)
        #expect(pack.stderr.contains("chart.svg:3: error media.svg-active"), "\(pack.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
        // `validate --quick` reads no content, so it cannot see script inside a file.
        #expect(try Harness.galley(["validate", "--quick", zip.path]).status == 0)
    }

    @Test func packWritesNoZipItsValidateRefusesAndFollowsTheSameLimits() throws {
        let source = Harness.fixtures.appending(path: "sources/repetitive-field-error")
        let work = try Harness.temporaryDirectory()
        let refused = try Harness.galley(["pack", source.path, "-o", work.path, "--json"], in: work)
        #expect(refused.status == 1)
        #expect(Harness.diagnosticIDs(refused) == ["zip.ratio"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path).isEmpty, "no zip and no temporary left")

        // A team that means it raises the limit in .galley.yml: pack and validate both follow it.
        try Data("limits:\n  max_ratio: 1000\n".utf8).write(to: work.appending(path: ".galley.yml"))
        let packed = try Harness.galley(["pack", source.path, "-o", work.path], in: work)
        #expect(packed.status == 0, "\(packed.stderr)")
        let zip = work.appending(path: "org.example.fixture.zip").path
        #expect(try Harness.galley(["validate", zip], in: work).status == 0)
        // Without the setting, validate refuses the zip with the id pack reported.
        try FileManager.default.removeItem(at: work.appending(path: ".galley.yml"))
        #expect(Harness.diagnosticIDs(try Harness.galley(["validate", zip, "--format", "json"], in: work)) == ["zip.ratio"])
    }

    @Test func previewPagesRunNothingFromABodyUnlessTrusted() throws {
        let zip = Harness.fixtures.appending(path: "zips/hostile-preview-error.zip")
        let out = try Harness.temporaryDirectory()
        let site = out.appending(path: "site")
        let result = try Harness.galley(["render", zip.path, "-o", site.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = (result.json?["warnings"] as? [[String: Any]]) ?? []
        #expect(Set(warnings.compactMap { $0["id"] as? String })
            == ["render.removed-element", "render.removed-attribute", "render.removed-url"])
        #expect(warnings.contains { ($0["message"] as? String)?.contains("<script> (body line 2)") == true })
        let pages = [site.appending(path: "index.html")]
            + (try FileManager.default.contentsOfDirectory(at: site.appending(path: "articles"), includingPropertiesForKeys: nil))
        for page in pages {
            let html = try String(contentsOf: page, encoding: .utf8)
            #expect(html.contains("<meta http-equiv=\"Content-Security-Policy\""), "\(page.lastPathComponent)")
            let inspection = HTMLInspector.inspect(html)
            #expect(inspection.scripts.isEmpty && inspection.eventHandlers.isEmpty && inspection.javascriptURLs.isEmpty)
            #expect(!html.contains("galley-xss"), "\(page.lastPathComponent)")
        }

        // One article as a page, and through a publisher's template: the policy is there too.
        let template = out.appending(path: "page.mustache")
        try Data("<!doctype html>\n<html><head><title>{{title}}</title></head><body>{{{body}}}</body></html>\n".utf8).write(to: template)
        for extra in [[String](), ["--page-template", template.path]] {
            let page = try Harness.galley(["render", zip.path, "--article", "5f0000000000000000000020", "--page"] + extra)
            #expect(page.status == 0)
            #expect(page.stdout.contains("Content-Security-Policy") && !page.stdout.contains("galley-xss"), "\(extra)")
            #expect(page.stdout.contains("img-src &#39;self&#39; data: file:;") && !page.stdout.contains("img-src *"), "\(extra)")
        }
        // Media from the site's files and the asset base's origin, nowhere else.
        let based = try Harness.galley(["render", zip.path, "--article", "5f0000000000000000000020", "--page",
                                        "--asset-base", "https://cdn.example.com:8443/issues/x/"])
        #expect(based.stdout.contains("img-src &#39;self&#39; data: file: https://cdn.example.com:8443;"), "\(based.stdout.prefix(600))")
        #expect(based.stdout.contains("font-src &#39;self&#39; data: file: https://cdn.example.com:8443;"))

        // --trust-bodies: the body as it was, and no policy.
        let trusted = try Harness.galley(["render", zip.path, "--article", "5f0000000000000000000020", "--page", "--trust-bodies"])
        #expect(trusted.stdout.contains("<script>console.log('galley-xss')</script>"))
        #expect(!trusted.stdout.contains("Content-Security-Policy"))
        #expect(!trusted.stderr.contains("render.removed"))
    }

    /// The store's files that hold its content: everything but SQLite's shared-memory index and
    /// write-ahead log, which any reader may create (the log must then be empty).
    static func content(_ store: URL) throws -> [String: Data] {
        let files = try Harness.snapshot(store.path)
        #expect(files["store.sqlite-wal"].map(\.isEmpty) ?? true, "a write-ahead log with content")
        return files.filter { !$0.key.hasSuffix("-shm") && !$0.key.hasSuffix("-wal") }
    }

    @Test func aSameVersionReimportAndAnIdleGcWriteNothing() throws {
        let store = try Harness.temporaryDirectory().appending(path: "store")
        let zip = Harness.fixtures.appending(path: "zips/example-valid.zip").path
        #expect(try Harness.galley(["import", zip, "--store", store.path]).status == 0)
        let before = try Self.content(store)
        let again = try Harness.galley(["import", zip, "--store", store.path, "--json"])
        #expect(again.status == 0 && again.stdout.contains("\"unchanged\""))
        #expect(try Self.content(store) == before)
        #expect(try Harness.galley(["store", "gc", "--store", store.path]).status == 0)
        #expect(try Self.content(store) == before)
    }

    @Test func linksInALoopAndAFIFOAssetAreClearErrorsNeverABlock() throws {
        let folder = try Harness.temporaryDirectory()
        let a = folder.appending(path: "a.zip"), b = folder.appending(path: "b.zip")
        try FileManager.default.createSymbolicLink(atPath: a.path, withDestinationPath: b.path)
        try FileManager.default.createSymbolicLink(atPath: b.path, withDestinationPath: a.path)
        for arguments in [["validate", a.path], ["import", a.path, "--store", folder.appending(path: "store").path],
                          ["render", a.path, "-o", folder.appending(path: "site").path]] {
            let result = try Harness.galley(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains("symbolic link that leads nowhere"), "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appending(path: "store").path))

        // A FIFO named as an asset: reported as unreadable, not read (which would block).
        let source = try Harness.copy(Harness.fixtures.appending(path: "sources/minimal-valid"))
        let article = source.appending(path: "articles/01-first")
        try FileManager.default.removeItem(at: article.appending(path: "photo.png"))
        #expect(mkfifo(article.appending(path: "photo.png").path, 0o644) == 0)
        for arguments in [["validate", source.path, "--format", "json"], ["pack", source.path, "-o", folder.path, "--json"]] {
            let result = try Harness.galley(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(Harness.diagnosticIDs(result) == ["source.file-unreadable"], "\(arguments)")
        }
    }

    /// The temporaries Galley left in `folder`.
    static func temporaries(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".galley-tmp") }
    }

    @Test func aPackStoppedBySIGTERMOrSIGINTLeavesNoTemporary() throws {
        // A source with a 256 MiB video, so the zip takes a moment to write.
        let source = try Harness.copy(Harness.fixtures.appending(path: "sources/minimal-valid"))
        let video = source.appending(path: "articles/02-second/clip.mp4")
        // Sparse: the test writes 24 bytes, not 256 MiB (the zip pack writes is killed early).
        try (Data([0, 0, 0, 0x18]) + Data("ftypisom".utf8) + Data(count: 12)).write(to: video)
        let handle = try FileHandle(forWritingTo: video)
        try handle.truncate(atOffset: 256 << 20 + 24)
        try handle.close()
        try Data("---\ntitle: Second\nassets: [clip.mp4]\n---\n<p>Plain.</p>\n<!-- [ASSET: clip.mp4] -->\n".utf8)
            .write(to: source.appending(path: "articles/02-second/article.html"))
        for signal in [SIGTERM, SIGINT] {
            // SIGINT's pack writes into a folder it makes itself: its temporaries go all the same.
            let out = signal == SIGTERM ? try Harness.temporaryDirectory() : try Harness.temporaryDirectory().appending(path: "new/dist")
            let process = Process()
            process.executableURL = Harness.galley
            process.arguments = ["pack", source.path, "-o", out.path + "/"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(20)
            while process.isRunning, ((try? Self.temporaries(out)) ?? []).isEmpty, Date() < deadline { usleep(1000) }
            #expect(process.isRunning, "the pack ended before a temporary could be seen")
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            #expect(process.terminationStatus == 128 + signal)
            // Nothing is left: no temporary, and no file at all (the folders SIGINT's pack made
            // may be gone too, as a failed pack removes what it made).
            let left = (try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []
            #expect(left.isEmpty, "\(signal): \(left)")
        }
    }

    @Test func theNextPackRemovesTemporariesOfAProcessThatIsGone() throws {
        let out = try Harness.temporaryDirectory()
        // pid 2^22 + 1 is above Linux's largest pid (pid_max is at most 2^22): never alive.
        let stale = ".org.example.fixture.zip.4194305-7.galley-tmp"
        let live = ".org.example.fixture.zip.\(getpid())-7.galley-tmp"
        // A dead process's temporary written to a second ago may be another machine's (a shared
        // folder): only one untouched for over a minute is removed.
        let recent = ".org.example.fixture.zip.4194305-8.galley-tmp"
        for name in [stale, live, recent] { try Data("half a zip".utf8).write(to: out.appending(path: name)) }
        for name in [stale, live] {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: out.appending(path: name).path)
        }
        let result = try Harness.galley(["pack", Harness.fixtures.appending(path: "sources/minimal-valid").path, "-o", out.path])
        #expect(result.status == 0)
        #expect(try Self.temporaries(out).sorted() == [live, recent].sorted())
    }
}
