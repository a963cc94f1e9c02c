import Foundation
import Testing

/// `galley validate` on the corpus (Tests/Fixtures, built by make_fixtures.py): each fixture's
/// name states its outcome, and each test asserts the exact set of findings, so no other error
/// or warning may appear (epubcheck's model).
@Suite struct ValidateFixtureTests {
    static let expectations: [(String, [String])] = [
        ("zips/example-valid.zip", []),
        ("zips/duplicate-key-error.zip", ["manifest.duplicate-key"]),
        ("zips/link-extra-field-error.zip", ["zip.link-field"]),
        ("zips/link-asi-mode-error.zip", ["zip.link-field"]),
        ("zips/orphan-local-entry-error.zip", ["zip.unaccounted-bytes"]),
        ("zips/trailing-data-error.zip", ["zip.unaccounted-bytes"]),
        ("zips/data-descriptor-valid.zip", []),
        ("zips/deflated-media-valid.zip", []),
        ("zips/many-articles-valid.zip", []),
        ("zips/articles-first-valid.zip", []),
        ("zips/zip64-huge-size-error.zip", ["zip.zip64", "zip.size", "zip.truncated"]),
        ("zips/zip64-huge-offset-error.zip", ["zip.zip64", "zip.unaccounted-bytes", "zip.offset"]),
        ("manifests/impossible-dates-error.json", ["manifest.publish-date", "manifest.date-format"]),
        ("zips/deep-entry-error.zip", ["zip.depth"]),
        ("zips/not-a-zip-error.zip", ["zip.unreadable"]),
        ("zips/empty-file-error.zip", ["zip.empty"]),
        ("zips/no-entries-error.zip", ["zip.empty"]),
        ("zips/truncated-error.zip", ["zip.truncated"]),
        ("zips/cd-out-of-bounds-error.zip", ["zip.truncated"]),
        ("zips/too-many-entries-error.zip", ["zip.entries"]),
        ("zips/zip64-error.zip", ["zip.zip64"]),
        ("zips/prepended-warning.zip", ["zip.leading-bytes"]),
        ("zips/encrypted-error.zip", ["zip.encrypted"]),
        ("zips/bzip2-method-error.zip", ["zip.method"]),
        ("zips/symlink-error.zip", ["zip.symlink"]),
        ("zips/device-error.zip", ["zip.special-file"]),
        ("zips/ratio-bomb-error.zip", ["zip.ratio"]),
        ("zips/declared-500gb-error.zip", ["zip.ratio", "zip.size"]),
        ("zips/overlap-bomb-error.zip", ["zip.overlap", "zip.unaccounted-bytes"]),
        ("zips/offset-out-of-bounds-error.zip", ["zip.offset", "zip.unaccounted-bytes"]),
        ("zips/local-name-mismatch-error.zip", ["zip.local-header"]),
        ("zips/absolute-path-error.zip", ["zip.path-absolute", "zip.top-folder"]),
        ("zips/zip-slip-dotdot-error.zip", ["zip.path-dotdot"]),
        ("zips/zip-slip-backslash-error.zip", ["zip.path-backslash", "zip.path-dotdot"]),
        ("zips/empty-name-error.zip", ["zip.name-empty", "zip.top-folder"]),
        ("zips/nul-name-error.zip", ["zip.name-nul"]),
        ("zips/non-utf8-name-error.zip", ["zip.name-encoding"]),
        ("zips/long-name-error.zip", ["zip.name-length"]),
        ("zips/name-with-space-warning.zip", ["zip.name-profile"]),
        ("zips/duplicate-name-error.zip", ["zip.duplicate-name"]),
        ("zips/case-collision-error.zip", ["zip.name-collision"]),
        ("zips/nfc-collision-error.zip", ["zip.name-collision", "zip.name-profile"]),
        ("zips/two-top-folders-error.zip", ["zip.top-folder"]),
        ("zips/renamed-warning.zip", ["zip.file-name"]),
        ("zips/no-manifest-error.zip", ["zip.manifest-missing"]),
        ("zips/manifest-last-info.zip", ["zip.manifest-not-first"]),
        ("zips/bad-crc-error.zip", ["zip.crc"]),
        ("zips/size-lie-error.zip", ["zip.size-mismatch"]),
        ("zips/bad-deflate-error.zip", ["zip.data"]),
        ("zips/deflate-trailing-bytes-error.zip", ["zip.data"]),
        ("zips/apple-id-mismatch-error.zip", ["manifest.apple-id"]),
        ("zips/missing-file-error.zip", ["ref.file-missing"]),
        ("zips/unreferenced-file-warning.zip", ["ref.unreferenced-file"]),
        ("zips/body-image-missing-error.zip", ["ref.body-file-missing"]),
        ("zips/body-link-valid.zip", []),
        ("zips/empty-media-error.zip", ["media.empty"]),
        ("zips/unknown-media-warning.zip", ["media.unknown"]),
        ("zips/sound-in-images-error.zip", ["media.extension", "media.wrong-list"]),
        ("zips/png-named-jpg-warning.zip", ["media.extension"]),
        ("zips/references-then-media-warning.zip", ["ref.unreferenced-file", "media.extension"]),
        ("zips/wrong-dimensions-warning.zip", ["media.dimensions"]),
        ("zips/older-format-error.zip", ["manifest.older-format"]),
        ("zips/missing-title-error.zip", ["manifest.key-missing"]),
        ("zips/svg-clean-valid.zip", []),
        ("zips/svg-script-error.zip", ["media.svg-active"]),
        ("zips/svg-onload-error.zip", ["media.svg-active"]),
        ("zips/svg-javascript-entity-error.zip", ["media.svg-active"]),
        ("zips/svg-malformed-warning.zip", ["media.svg-malformed"]),
        ("zips/hostile-preview-error.zip",
         ["body.event-handler", "body.html-malformed", "body.javascript-url", "body.script", "ref.placeholder-malformed", "ref.placeholder-unknown"]),
        ("zips/hostile-body-error.zip", ["body.event-handler", "body.javascript-url", "body.remote-resource", "body.script"]),
        ("manifests/template-valid.json", []),
        ("manifests/date-order-warning.json", ["manifest.date-order"]),
        ("manifests/crashes-dumpling-error.json",
         ["manifest.date-format", "manifest.older-format", "manifest.publish-date", "manifest.type", "ref.placeholder-unknown"]),
    ]

    struct Case: CustomTestStringConvertible, Sendable {
        var path: String
        var ids: [String]
        var testDescription: String { path }
    }

    static var cases: [Case] { expectations.map { Case(path: $0.0, ids: $0.1) } }

    @Test(arguments: cases)
    func fixture(_ testCase: Case) throws {
        let path = Harness.fixtures.appending(path: testCase.path).path
        let result = try Harness.galley(["validate", path, "--format", "json"])
        let json = try #require(result.json, "\(result.stdout)\(result.stderr)")
        let inputs = try #require(json["inputs"] as? [[String: Any]])
        let ids = Set(inputs.flatMap { ($0["diagnostics"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } })
        #expect(ids == Set(testCase.ids))
        let expectedStatus: Int32 = testCase.path.contains("-error") ? 1 : 0
        #expect(result.status == expectedStatus)
    }

    /// The reference checks and the media checks run on two threads after the content pass;
    /// validate and import report their findings in the order one thread made them.
    @Test func referenceFindingsComeBeforeMediaFindingsInValidateAndImport() throws {
        let zip = Harness.fixtures.appending(path: "zips/references-then-media-warning.zip").path
        let expected = ["ref.unreferenced-file", "media.extension"]
        let validate = try Harness.galley(["validate", zip, "--format", "json"])
        let inputs = try #require(validate.json?["inputs"] as? [[String: Any]], "\(validate.stdout)\(validate.stderr)")
        #expect(inputs.flatMap { ($0["diagnostics"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } } == expected)
        let store = try Harness.temporaryDirectory().appending(path: "store").path
        let imported = try Harness.galley(["import", zip, "--store", store, "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let imports = try #require(imported.json?["imports"] as? [[String: Any]], "\(imported.stdout)\(imported.stderr)")
        #expect(imports.flatMap { ($0["warnings"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } } == expected)
    }

    @Test func everyCorpusFileHasAnExpectation() throws {
        var files: [String] = []
        for folder in ["zips", "manifests"] {
            for name in try FileManager.default.contentsOfDirectory(atPath: Harness.fixtures.appending(path: folder).path) {
                files.append("\(folder)/\(name)")
            }
        }
        #expect(Set(files) == Set(Self.expectations.map(\.0)))
    }

    @Test func everySourceFixtureValidatesWithTheSameFindingsAsPack() throws {
        let folder = Harness.fixtures.appending(path: "sources")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() {
            let path = folder.appending(path: name).path
            let validate = try Harness.galley(["validate", path, "--format", "json"])
            let inputs = validate.json?["inputs"] as? [[String: Any]] ?? []
            let validateIDs = Set(inputs.flatMap { ($0["diagnostics"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } })
            let pack = try Harness.galley(["pack", path, "-o", try Harness.temporaryDirectory().path, "--json"])
            // Validate reports what pack reports, plus its checks of the converted bodies.
            let packIDs = Set(Harness.diagnosticIDs(pack))
            #expect(validateIDs.subtracting(packIDs).allSatisfy { $0.hasPrefix("body.") && !$0.hasPrefix("body.placeholder") },
                    "\(name)")
            // Validate makes no thumbnails (it writes nothing), so it cannot see a picture libvips fails on.
            let packOnly: Set<String> = ["pack.thumbnail-failed"]
            #expect(validateIDs.isSuperset(of: packIDs.subtracting(packOnly)), "\(name)")
            #expect(validate.status == (name.hasSuffix("-error") ? 1 : 0), "\(name)")
            let onlyPackFinds = !packIDs.isEmpty && packIDs.isSubset(of: packOnly)
            #expect(validateIDs.isEmpty == (name.hasSuffix("-valid") || onlyPackFinds), "\(name): \(validateIDs)")
        }
    }

    @Test func ciReportsAgreeWithTheExitStatusAndNameFilesFromTheWorkingDirectory() throws {
        let work = try Harness.temporaryDirectory()
        try FileManager.default.createDirectory(at: work.appending(path: "dist"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Harness.fixtures.appending(path: "zips/unreferenced-file-warning.zip"),
                                         to: work.appending(path: "dist/unreferenced-file-warning.zip"))
        // A folder given by its absolute path: reports still name files from the working directory.
        let folder = work.appending(path: "dist").path
        for strict in [false, true] {
            let flags = strict ? ["--strict"] : []
            let junit = try Harness.galley(["validate", folder, "--format", "junit"] + flags, in: work)
            #expect(junit.status == (strict ? 1 : 0))
            #expect(junit.stdout.contains("failures=\"\(strict ? 1 : 0)\""), "\(junit.stdout)")
            let json = try Harness.galley(["validate", folder, "--format", "json"] + flags, in: work)
            let summary = try #require(json.json?["summary"] as? [String: Any])
            #expect(summary["errors"] as? Int == (strict ? 1 : 0) && json.status == junit.status)
            let github = try Harness.galley(["validate", folder, "--format", "github"] + flags, in: work)
            #expect(github.stdout.hasPrefix(strict ? "::error file=dist/unreferenced-file-warning.zip," : "::warning file=dist/unreferenced-file-warning.zip,"),
                    "\(github.stdout)")
            let sarif = try Harness.galley(["validate", folder, "--format", "sarif"] + flags, in: work)
            #expect(sarif.stdout.contains("\"uri\" : \"dist/unreferenced-file-warning.zip\"") || sarif.stdout.contains("\"uri\": \"dist/unreferenced-file-warning.zip\""),
                    "\(sarif.stdout)")
            #expect(sarif.stdout.contains("\"uriBaseId\"") && !sarif.stdout.contains("example.com"))
        }
    }

    @Test func bodyFindingsInSourcesPointAtTheSourceFile() throws {
        let html = try Harness.galley(["validate", Harness.fixtures.appending(path: "sources/malformed-html-warning").path])
        #expect(html.status == 0)
        #expect(html.stdout.contains("malformed-html-warning/articles/01-first/article.html:5:22: warning body.html-malformed:"))
        let markdown = try Harness.galley(["validate", Harness.fixtures.appending(path: "sources/script-body-error").path])
        #expect(markdown.status == 1)
        #expect(markdown.stdout.contains("script-body-error/articles/01-first/article.md: error body.script: a <script> element (line 2 of the HTML made from the Markdown)"))
    }

    @Test func aZipBombIsRefusedFromItsDirectoryQuickly() throws {
        let start = Date()
        let result = try Harness.galley(["validate", Harness.fixtures.appending(path: "zips/declared-500gb-error.zip").path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("error zip.size"))
        #expect(Date().timeIntervalSince(start) < 10, "read from the directory, never inflated")
    }
}

@Suite struct ValidateCommandTests {
    func packedExample() throws -> URL {
        let out = try Harness.temporaryDirectory()
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", out.path]).status == 0)
        return out.appending(path: "com.example.harbour.2026-01.zip")
    }

    @Test func thePackedExampleAndItsSourceAreValid() throws {
        let zip = try packedExample()
        let result = try Harness.galley(["validate", zip.path, Harness.example.path])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("2 inputs checked: 0 errors, 0 warnings"))
        let quick = try Harness.galley(["validate", "--quick", zip.path])
        #expect(quick.status == 0)
    }

    @Test func aFolderOfZipsIsValidatedZipByZip() throws {
        let zip = try packedExample()
        let bad = zip.deletingLastPathComponent().appending(path: "bad-crc-error.zip")
        try FileManager.default.copyItem(at: Harness.fixtures.appending(path: "zips/bad-crc-error.zip"), to: bad)
        let result = try Harness.galley(["validate", zip.deletingLastPathComponent().path, "--format", "json"])
        #expect(result.status == 1)
        let summary = try #require(result.json?["summary"] as? [String: Any])
        #expect(summary["inputs"] as? Int == 2)
        #expect(summary["errors"] as? Int == 1)
    }

    /// Inputs are told apart by content (one detector for validate and render), and anything but
    /// a regular file or a folder is refused at once with exit 2: a FIFO must not block.
    @Test func inputKindsComeFromContentAndSpecialFilesAreRefused() throws {
        let folder = try Harness.temporaryDirectory()
        let manifest = folder.appending(path: "issue-manifest.txt")
        try FileManager.default.copyItem(at: Harness.fixtures.appending(path: "manifests/crashes-dumpling-error.json"), to: manifest)
        let asManifest = try Harness.galley(["validate", manifest.path, "--format", "json"])
        let input = try #require((asManifest.json?["inputs"] as? [[String: Any]])?.first)
        #expect(input["kind"] as? String == "manifest")

        let fifo = folder.appending(path: "issue.zip")
        #expect(mkfifo(fifo.path, 0o644) == 0)
        for arguments in [["validate", fifo.path], ["render", fifo.path, "-o", folder.appending(path: "site").path],
                          ["validate", "/dev/zero"]] {
            let result = try Harness.galley(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains("not a regular file"), "\(arguments): \(result.stderr)")
        }
    }

    @Test func textReportsAreLocatedWithHints() throws {
        let path = Harness.fixtures.appending(path: "manifests/crashes-dumpling-error.json").path
        let result = try Harness.galley(["validate", path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("crashes-dumpling-error.json:8:19: error manifest.publish-date:"))
        #expect(result.stdout.contains("hint: Write it as MM/dd/yyyy"))
        #expect(result.stdout.contains("(at articles[0].title)"))
        #expect(!result.stdout.contains("\u{1B}["))
    }

    @Test func exitStatusesAndStrict() throws {
        let warning = Harness.fixtures.appending(path: "zips/renamed-warning.zip").path
        #expect(try Harness.galley(["validate", warning]).status == 0)
        #expect(try Harness.galley(["validate", "--strict", warning]).status == 1)
        #expect(try Harness.galley(["validate", "/no/such/file.zip"]).status == 2)
        #expect(try Harness.galley(["validate"]).status == 2)
        #expect(try Harness.galley(["validate", "--format", "yaml", warning]).status == 2)
        #expect(try Harness.galley(["validate", "--ignore", "zip.no-such-check", warning]).status == 2)
        #expect(try Harness.galley(["validate", "--strict", "--ignore", "zip.file-name", warning]).status == 0)
    }

    /// An unknown check id is refused with a near id when there is one, and never with a far one.
    @Test func anUnknownCheckIdSuggestsOnlyANearOne() throws {
        let warning = Harness.fixtures.appending(path: "zips/renamed-warning.zip").path
        let typo = try Harness.galley(["validate", "--ignore", "zip.file-nam", warning])
        #expect(typo.status == 2)
        #expect(typo.stderr.contains("unknown check id `zip.file-nam`"), "\(typo.stderr)")
        #expect(typo.stderr.contains("Did you mean `zip.file-name`? `galley validate --list-checks` lists them all."), "\(typo.stderr)")
        let far = try Harness.galley(["validate", "--ignore", "xyz", warning])
        #expect(far.status == 2)
        #expect(!far.stderr.contains("Did you mean"), "\(far.stderr)")
        #expect(far.stderr.contains("`galley validate --list-checks` lists them all."), "\(far.stderr)")
    }

    @Test func aGalleyYmlChangesSeverities() throws {
        let folder = try Harness.temporaryDirectory()
        try Data("checks:\n  zip.file-name: error\n".utf8).write(to: folder.appending(path: ".galley.yml"))
        let warning = Harness.fixtures.appending(path: "zips/renamed-warning.zip").path
        let result = try Harness.galley(["validate", warning], in: folder)
        #expect(result.status == 1)
        #expect(result.stdout.contains("error zip.file-name"))
        try Data("checks:\n  zip.file-nam: off\n".utf8).write(to: folder.appending(path: ".galley.yml"))
        let typo = try Harness.galley(["validate", warning], in: folder)
        #expect(typo.status == 2)
        #expect(typo.stderr.contains("Did you mean `zip.file-name`?"))
    }

    @Test func limitsComeFromTheConfiguration() throws {
        let folder = try Harness.temporaryDirectory()
        let zip = Harness.fixtures.appending(path: "zips/example-valid.zip").path
        try Data("limits:\n  max_entries: 2\n".utf8).write(to: folder.appending(path: ".galley.yml"))
        let tight = try Harness.galley(["validate", zip], in: folder)
        #expect(tight.status == 1)
        #expect(tight.stdout.contains("error zip.entries"))
        try Data("limits:\n  max_entries: many\n".utf8).write(to: folder.appending(path: ".galley.yml"))
        #expect(try Harness.galley(["validate", zip], in: folder).status == 2)
        // max_depth counts name components: 1 refuses even `folder/latest.json`, 400 lets 302 pass.
        try Data("limits:\n  max_depth: 1\n".utf8).write(to: folder.appending(path: ".galley.yml"))
        #expect(try Harness.galley(["validate", zip], in: folder).stdout.contains("error zip.depth"))
        try Data("limits:\n  max_depth: 400\n".utf8).write(to: folder.appending(path: ".galley.yml"))
        let deep = Harness.fixtures.appending(path: "zips/deep-entry-error.zip").path
        #expect(try Harness.galley(["validate", deep], in: folder).status == 0)
    }

    @Test func machineFormats() throws {
        let path = Harness.fixtures.appending(path: "zips/hostile-body-error.zip").path
        let github = try Harness.galley(["validate", path, "--format", "github"])
        #expect(github.status == 1)
        #expect(github.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("::error ") || $0.hasPrefix("::warning ") || $0.hasPrefix("::notice ") })
        #expect(github.stdout.contains("title=body.script::"))
        let last = github.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.hasPrefix("::notice title=galley validate::1 input checked: ") && !last.hasPrefix("::notice title=galley validate::1 input checked: 0 errors"),
                "the last line sums the run up: \(last)")
        // A clean zip still says it was checked: a workflow log shows the step ran.
        let clean = try Harness.galley(["validate", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--format", "github"])
        #expect(clean.status == 0 && clean.stdout == "::notice title=galley validate::1 input checked: 0 errors, 0 warnings\n",
                "\(clean.stdout)")

        let junit = try Harness.galley(["validate", path, "--format", "junit"])
        let junitFile = try Harness.temporaryDirectory().appending(path: "report.xml")
        try Data(junit.stdout.utf8).write(to: junitFile)
        let parsed = try Harness.tool("python3", ["-c", """
            import sys, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            print(root.tag, root.get('failures'), len(list(root.iter('testcase'))))
            """, junitFile.path])
        #expect(parsed.stdout.hasPrefix("testsuites 3"), "\(parsed.stdout)\(parsed.stderr)")

        let sarif = try Harness.galley(["validate", path, "--format", "sarif"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(sarif.stdout.utf8)) as? [String: Any])
        #expect(document["version"] as? String == "2.1.0")
        let runs = try #require(document["runs"] as? [[String: Any]])
        let results = try #require(runs.first?["results"] as? [[String: Any]])
        #expect(Set(results.compactMap { $0["ruleId"] as? String })
            == ["body.event-handler", "body.javascript-url", "body.remote-resource", "body.script"])

        let json = try Harness.galley(["validate", path, "--format", "json"])
        let root = try #require(json.json)
        #expect(root["schema_version"] as? Int == 1)
        let first = try #require(((root["inputs"] as? [[String: Any]])?.first?["diagnostics"] as? [[String: Any]])?.first)
        #expect(Set(first.keys) == ["id", "severity", "message", "location", "hint"])
    }

    @Test func listChecksPrintsTheCatalogue() throws {
        let result = try Harness.galley(["validate", "--list-checks"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("zip.path-dotdot"))
        #expect(result.stdout.contains("manifest.date-format"))
    }
}
