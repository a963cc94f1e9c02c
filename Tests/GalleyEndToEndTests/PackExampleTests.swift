import Foundation
import Testing

/// `galley pack` on the bundled example, checked by tools that share no code with Galley.
@Suite struct PackExampleTests {
    let appleID = "com.example.harbour.2026-01"

    func packExample(into output: URL, environment: [String: String] = [:], source: URL = Harness.example) throws
        -> Harness.Result
    {
        try Harness.galley(["pack", source.path, "--output", output.path, "--json"], environment: environment)
    }

    @Test func theExamplePacksIntoAZipThatUnzipAndPythonAccept() throws {
        let out = try Harness.temporaryDirectory()
        let result = try packExample(into: out)
        #expect(result.status == 0, "\(result.stderr)")
        let zip = out.appending(path: "\(appleID).zip")
        #expect(FileManager.default.fileExists(atPath: zip.path))

        let unzip = try Harness.tool("unzip", ["-t", zip.path])
        #expect(unzip.status == 0, "\(unzip.stdout)")
        #expect(unzip.stdout.contains("No errors detected"))

        let check = try Harness.tool("python3", [Harness.checkScript.path, zip.path])
        #expect(check.status == 0, "wire-format problems:\n\(check.stdout)\(check.stderr)")
        // Nothing but the zip is left in the output folder (no temporary files).
        let left = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(left == ["\(appleID).zip"])
    }

    @Test func theJSONSummaryDescribesTheZip() throws {
        let out = try Harness.temporaryDirectory()
        let result = try packExample(into: out)
        let json = try #require(result.json, "stdout: \(result.stdout)")
        #expect(json["error"] == nil)
        #expect(json["schema_version"] as? Int == 1)
        let summary = json
        let zip = out.appending(path: "\(appleID).zip")
        #expect(summary["path"] as? String == zip.path)
        #expect(summary["articles"] as? Int == 4)
        #expect(summary["assets"] as? Int == 8)
        #expect(summary["apple_id"] as? String == appleID)
        let size = try FileManager.default.attributesOfItem(atPath: zip.path)[.size] as? Int
        #expect(summary["bytes"] as? Int == size)
        let sha = try Harness.tool("sha256sum", [zip.path]).stdout.split(separator: " ").first.map(String.init)
        #expect(summary["sha256"] as? String == sha)
        #expect((summary["warnings"] as? [Any])?.isEmpty == true)
    }

    @Test func latestJSONHasTheExpectedOrderDatesAndPlaceholders() throws {
        let out = try Harness.temporaryDirectory()
        #expect(try packExample(into: out).status == 0)
        let zip = out.appending(path: "\(appleID).zip")
        let text = try Harness.tool("unzip", ["-p", zip.path, "\(appleID)/latest.json"]).stdout
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(json["publish_date"] as? String == "01/05/2026")
        #expect(json["last_updated"] as? String == "2026-01-04T18:30:00.000+0000")
        let articles = try #require(json["articles"] as? [[String: Any]])
        #expect(articles.map { $0["title"] as? String } == [
            "The Lighthouse Keepers", "The Night Ferry", "The Harbour in Motion", "Letters",
        ])
        // Dates: given ones kept, the last one derived a minute before the previous.
        #expect(articles.map { $0["date_last_updated"] as? String } == [
            "2026-01-04T18:30:00.000+0000", "2026-01-04T12:00:00.000+0000", "2026-01-04T11:00:00.000+0000",
            "2026-01-04T10:59:00.000+0000",
        ])
        // The cover comes first among the issue images.
        let images = try #require((json["images"] as? [String: Any])?["ordered"] as? [[String: Any]])
        #expect(images.first?["file_name"] as? String == "cover.jpg")
        #expect(images.first?["crop_350_350"] as? String == "cover-350x350.jpg")
        // A video sits in the videos extension list, with its poster as the thumbnail.
        let videos = try #require((articles[2]["videos"] as? [String: Any])?["ordered"] as? [[String: Any]])
        #expect(videos.first?["file_name"] as? String == "harbour-in-motion-harbour.mp4")
        #expect(videos.first?["crop_350_350"] as? String == "harbour-in-motion-harbour-poster.jpg")
        // Markdown became HTML and the placeholder survived, rewritten to the asset's id.
        let body = try #require(articles[0]["body"] as? String)
        #expect(body.contains("<strong>Marta Lind</strong>"))
        #expect(body.contains("<table>"))
        let imageIDs = ((articles[0]["images"] as? [String: Any])?["ordered"] as? [[String: Any]])?
            .compactMap { $0["id"] as? String } ?? []
        for id in imageIDs {
            #expect(body.contains("\n<!-- [ASSET: \(id)] -->\n"))
        }
        #expect(articles[0]["featured"] as? [String: Int] == [json["global_id"] as? String ?? "": 1])
        #expect(articles[1]["featured"] == nil)
        // The HTML body of the letters passes through unchanged.
        let letters = try String(contentsOf: Harness.example.appending(path: "articles/04-letters/article.html"),
                                 encoding: .utf8)
        #expect(articles[3]["body"] as? String == letters)
    }

    @Test func packingTwiceGivesTheSameBytesWhateverTheTimeZoneLocaleAndMtimes() throws {
        let first = try Harness.copy(Harness.example)
        let second = try Harness.copy(Harness.example)
        try Harness.touchAll(first, date: Date(timeIntervalSince1970: 1_000_000_000))
        try Harness.touchAll(second, date: Date(timeIntervalSince1970: 1_700_000_000))
        let outA = try Harness.temporaryDirectory()
        let outB = try Harness.temporaryDirectory()
        let a = try packExample(into: outA, environment: ["TZ": "UTC", "LANG": "C"], source: first)
        let b = try packExample(into: outB, environment: ["TZ": "Asia/Tokyo", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"],
                                source: second)
        #expect(a.status == 0 && b.status == 0)
        let bytesA = try Data(contentsOf: outA.appending(path: "\(appleID).zip"))
        let bytesB = try Data(contentsOf: outB.appending(path: "\(appleID).zip"))
        #expect(bytesA == bytesB)
        #expect(bytesA.count > 100_000)
        // A third run under another umask, with the files' modes changed too.
        let third = try Harness.copy(Harness.example)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: third.appending(path: "cover.jpg").path)
        let outC = try Harness.temporaryDirectory()
        let c = try Harness.run(URL(fileURLWithPath: "/bin/sh"), [
            "-c", "umask 077 && exec \"$0\" pack \"$1\" --output \"$2\"", Harness.galley.path, third.path, outC.path,
        ])
        #expect(c.status == 0, "\(c.stderr)")
        #expect(try Data(contentsOf: outC.appending(path: "\(appleID).zip")) == bytesA)
    }

    @Test func sourceDateEpochSetsTheEntryTimes() throws {
        let out = try Harness.temporaryDirectory()
        let result = try packExample(into: out, environment: ["SOURCE_DATE_EPOCH": "1700000000"])
        #expect(result.status == 0)
        let listing = try Harness.tool("unzip", ["-l", out.appending(path: "\(appleID).zip").path],
                                       environment: ["TZ": "UTC"]).stdout
        #expect(listing.contains("2023-11-14 22:13"))
        let bad = try packExample(into: try Harness.temporaryDirectory(), environment: ["SOURCE_DATE_EPOCH": "yesterday"])
        #expect(bad.status == 2)
    }

    @Test func anExistingOutputIsKeptUnlessForced() throws {
        let out = try Harness.temporaryDirectory()
        let zip = out.appending(path: "\(appleID).zip")
        try Data("keep me".utf8).write(to: zip)
        let refused = try packExample(into: out)
        #expect(refused.status == 2)
        #expect(refused.stdout.contains("already exists"))
        #expect(try Data(contentsOf: zip) == Data("keep me".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["\(appleID).zip"])

        let forced = try Harness.galley(["pack", Harness.example.path, "-o", out.path, "--force"])
        #expect(forced.status == 0)
        #expect(try Data(contentsOf: zip).count > 100_000)
    }

    @Test func anOutputPathEndingInZipIsUsedAsIs() throws {
        let out = try Harness.temporaryDirectory()
        let zip = out.appending(path: "\(appleID).zip")
        let result = try Harness.galley(["pack", Harness.example.path, "--output", zip.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        #expect(FileManager.default.fileExists(atPath: zip.path))

        let renamed = try Harness.galley(["pack", Harness.example.path, "--output", out.appending(path: "x.zip").path])
        #expect(renamed.status == 0)
        #expect(renamed.stderr.contains("warning pack.zip-name"))
    }

    @Test func theDefaultOutputIsTheCurrentFolder() throws {
        let out = try Harness.temporaryDirectory()
        let result = try Harness.galley(["pack", Harness.example.path], in: out)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: out.appending(path: "\(appleID).zip").path))
    }

    @Test func badArgumentsExitWithStatusTwo() throws {
        #expect(try Harness.galley(["pack"]).status == 2)
        #expect(try Harness.galley(["pack", "/no/such/folder"]).status == 2)
        #expect(try Harness.galley(["pack", Harness.example.path, "--output", "/dev/null/dir/"]).status == 2)
        #expect(try Harness.galley(["frobnicate"]).status == 2)
        let help = try Harness.galley(["pack", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("SOURCE_DATE_EPOCH"))
        let version = try Harness.galley(["--version"])
        #expect(version.status == 0)
        #expect(!version.stdout.isEmpty)
    }
}
