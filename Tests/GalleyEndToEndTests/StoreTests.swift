import Foundation
import GalleyTestSupport
import Testing

/// `galley import` and the store's queries, end to end.
@Suite struct StoreTests {
    let appleID = "com.example.harbour.2026-01"

    /// The example packed, optionally edited first (`edit` gets the source copy).
    func packExample(lastUpdated: String? = nil, edit: ((URL) throws -> Void)? = nil) throws -> URL {
        let source = try Harness.copy(Harness.example)
        if let lastUpdated {
            let issue = source.appending(path: "issue.yaml")
            let text = try String(contentsOf: issue, encoding: .utf8)
                .replacingOccurrences(of: "last_updated: 2026-01-04T18:30:00Z", with: "last_updated: \(lastUpdated)")
            try Data(text.utf8).write(to: issue)
        }
        try edit?(source)
        let out = try Harness.temporaryDirectory()
        let result = try Harness.galley(["pack", source.path, "-o", out.path])
        #expect(result.status == 0, "\(result.stderr)")
        return out.appending(path: "\(appleID).zip")
    }

    func store() throws -> String { try Harness.temporaryDirectory().appending(path: "store").path }

    /// The backends the crash-safety and concurrency tests run on: a folder (SQLite), and a
    /// PostgreSQL store (with a blob folder) when the tests run with a server (`make test` does).
    enum Backend: String, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
        static var all: [Backend] { PostgresTestServer.enabled ? [.sqlite, .postgres] : [.sqlite] }

        /// A new store's `--store` value.
        func store() throws -> String {
            switch self {
            case .sqlite: return try Harness.temporaryDirectory().appending(path: "store").path
            case .postgres: return try PostgresTestServer.newStore()
            }
        }
    }

    /// An empty `--store` would be the current folder: every command that takes one refuses it
    /// (a usage error, exit 2) and writes nothing there.
    @Test func anEmptyStoreLocationIsRefusedAndNothingIsWritten() throws {
        let work = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let zip = Harness.fixtures.appending(path: "zips/example-valid.zip").path
        for arguments in [["import", zip, "--store", ""], ["issues", "--store", ""], ["store", "check", "--store", ""],
                          ["serve", "--store", "", "--port", "0"], ["sync", "http://127.0.0.1:1/feed", "--store", ""]] {
            let result = try Harness.galley(arguments, in: work)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("the store location is empty"), "\(arguments): \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path).isEmpty)
    }

    @Test func importReimportNewerOlderAndForce() throws {
        let store = try store()
        let zip = try packExample()
        let first = try Harness.galley(["import", zip.path, "--store", store, "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("\"status\" : \"imported\""))
        let again = try Harness.galley(["import", zip.path, "--store", store])
        #expect(again.status == 0)
        #expect(again.stdout.contains("already in the store"))

        let newer = try packExample(lastUpdated: "2026-01-10T09:00:00Z") { source in
            let letters = source.appending(path: "articles/04-letters/article.yaml")
            let text = try String(contentsOf: letters, encoding: .utf8).replacingOccurrences(of: "title: Letters", with: "title: Letters to the Editor")
            try Data(text.utf8).write(to: letters)
        }
        let replaced = try Harness.galley(["import", newer.path, "--store", store])
        #expect(replaced.stdout.contains("replaced"), "\(replaced.stdout)\(replaced.stderr)")
        let shown = try Harness.galley(["issue", "show", appleID, "--store", store, "--json"])
        #expect(shown.stdout.contains("Letters to the Editor"))
        #expect(shown.stdout.contains("2026-01-10T09:00:00.000Z"), "the store's JSON gives instants in RFC 3339")

        let older = try Harness.galley(["import", zip.path, "--store", store])
        #expect(older.status == 1)
        #expect(older.stderr.contains("error import.older"))
        #expect(try Harness.galley(["import", zip.path, "--store", store, "--force"]).stdout.contains("replaced"))

        let check = try Harness.galley(["store", "check", "--store", store])
        #expect(check.status == 0, "\(check.stdout)")
        // Replacing left no old folder behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: store + "/issues").count == 1)
    }

    @Test func queriesAnswerWhatDumplingsAPIAnswered() throws {
        let store = try store()
        #expect(try Harness.galley(["import", try packExample().path, "--store", store]).status == 0)
        func ids(_ arguments: [String]) throws -> [String] {
            let result = try Harness.galley(arguments + ["--store", store, "--json"])
            let list = (result.json?["articles"] ?? result.json?["items"]) as? [[String: Any]] ?? []
            return list.compactMap { $0["title"] as? String }
        }
        #expect(try ids(["articles"]) == ["The Lighthouse Keepers", "The Night Ferry", "The Harbour in Motion", "Letters"])
        #expect(try ids(["articles", "--featured"]) == ["The Lighthouse Keepers"])
        #expect(try ids(["articles", "--type", "video"]) == ["The Harbour in Motion"])
        #expect(try ids(["articles", "--exclude-type", "letters", "--limit", "2", "--page", "1"]) == ["The Harbour in Motion"])
        #expect(try ids(["articles", "--keyword", "night shift"]) == ["The Lighthouse Keepers", "The Night Ferry"])
        #expect(try ids(["articles", "--keyword", "night"]).isEmpty, "whole keywords, not substrings")
        #expect(try ids(["articles", "--by-date"]) == ["The Lighthouse Keepers", "The Night Ferry", "The Harbour in Motion", "Letters"])
        #expect(try ids(["search", "lighthouse"]) == ["The Lighthouse Keepers"])
        #expect(try ids(["search", "gulls"]) == ["The Night Ferry"], "body text is searched")
        #expect(try ids(["search", "nothing-like-this"]).isEmpty)
        #expect(try ids(["search", "\"night ferry\""]).first == "The Night Ferry", "a quoted phrase")
        let marked = try Harness.galley(["search", "ferry", "--store", store])
        #expect(marked.stdout.contains("The Night [Ferry]"), "matched words in brackets without colour: \(marked.stdout)")
        let none = try Harness.galley(["search", "nothing-like-this", "--store", store])
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.contains("no article matches"), "\(none.stderr)")
        #expect(try ids(["search", "LIGHTH", "--rank-all"]) == ["The Lighthouse Keepers"], "words are prefixes, in any case")
        #expect(try Harness.galley(["search", "ferry", "--limit", "0", "--store", store]).status == 2)
        let unknown = try Harness.galley(["articles", "--issue", "no-such-issue", "--store", store])
        #expect(unknown.status == 2, "an unknown issue is an error, never all articles")
        let issues = try Harness.galley(["issues", "--store", store, "--json"])
        #expect(issues.stdout.contains("\"articles\" : 4"))
    }

    @Test func articlesAssetsAndIssueNeighbours() throws {
        let store = try store()
        let january = try packExample()
        let february = try packExample(lastUpdated: "2026-02-01T00:00:00Z") { source in
            let issue = source.appending(path: "issue.yaml")
            let text = try String(contentsOf: issue, encoding: .utf8)
                .replacingOccurrences(of: "apple_id: com.example.harbour.2026-01", with: "apple_id: com.example.harbour.2026-02")
                .replacingOccurrences(of: "publish_date: 2026-01-05", with: "publish_date: 2026-02-02")
            try Data(text.utf8).write(to: issue)
        }
        let febZip = february.deletingLastPathComponent().appending(path: "com.example.harbour.2026-02.zip")
        #expect(try Harness.galley(["import", january.path, febZip.path, "--store", store]).status == 0)
        func run(_ arguments: [String]) throws -> Harness.Result { try Harness.galley(arguments + ["--store", store]) }

        #expect(try run(["issues", "--newest"]).stdout.contains("com.example.harbour.2026-02"))
        #expect(try run(["issues", "--older-than", "com.example.harbour.2026-02"]).stdout.contains("com.example.harbour.2026-01"))
        #expect(try run(["issues", "--newer-than", "com.example.harbour.2026-02"]).stdout.isEmpty)
        // Both issues' articles are there, each under its own ids.
        #expect(try run(["articles", "--json"]).stdout.components(separatedBy: "\"global_id\"").count == 9)
        let ferry = "5f827f80262d6fe87d41ca17"
        let show = try run(["article", "show", ferry, "--json"])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("night-ferry-interview.mp3"))
        #expect(try run(["article", "show", "fbf92e3a2aa69e50f4c7b6e7", "--meta", "reading_time"]).stdout == "7\n")
        #expect(try run(["article", "show", "fbf92e3a2aa69e50f4c7b6e7", "--meta", "nothing"]).status == 2)
        #expect(try run(["article", "older", ferry]).stdout.contains("The Harbour in Motion"))
        #expect(try run(["article", "newer", ferry]).stdout.contains("The Lighthouse Keepers"))
        let playlist = try run(["assets", "--article", ferry, "--playlist", "--json"])
        let sounds = try #require(playlist.json?["assets"] as? [[String: Any]])
        #expect(sounds.count == 1)
        let path = try #require(sounds.first?["path"] as? String)
        #expect(FileManager.default.fileExists(atPath: path), "the asset's file path in the store")
        #expect(try run(["assets", "--issue", "com.example.harbour.2026-01", "--cover"]).stdout.contains("cover.jpg"))
        #expect(try run(["assets", "--issue", "com.example.harbour.2026-01", "--cover", "--count"]).stdout == "1\n")
        let firstOfArticle = try run(["assets", "--article", "fbf92e3a2aa69e50f4c7b6e7", "--first"]).stdout
        #expect(firstOfArticle.contains("the-lighthouse-keepers-lamp-room.jpg") && !firstOfArticle.contains("cover.jpg"))
        #expect(try run(["assets", "--issue", "com.example.harbour.2026-01", "--count"]).stdout == "8\n")
        #expect(try run(["assets", "--issue", "no-such-issue"]).status == 2)
    }

    @Test func renderAnImportedArticleFromTheStore() throws {
        let store = try store()
        #expect(try Harness.galley(["import", try packExample().path, "--store", store]).status == 0)
        let out = try Harness.temporaryDirectory()
        let page = out.appending(path: "keepers.html")
        let result = try Harness.galley([
            "render", "--from-store", "--store", store, "--article", "fbf92e3a2aa69e50f4c7b6e7", "--page", "-o", page.path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(html.contains("<h1>The Lighthouse Keepers</h1>"))
        let src = try #require(html.firstRange(of: /src="([^"]+lamp-room\.jpg)"/).map { String(html[$0]).dropFirst(5).dropLast() })
        #expect(FileManager.default.fileExists(atPath: out.appending(path: String(src)).standardizedFileURL.path), "\(src)")
        #expect(try Harness.galley(["render", "--from-store", "--store", store, "--article", "nope"]).status == 2)
        #expect(try Harness.galley(["render", "--from-store", "--store", store]).status == 2)
    }

    @Test func idsAreScopedPerIssue() throws {
        let store = try store()
        func issue(_ appleID: String) throws -> URL {
            let zip = try packExample { source in
                let fields = source.appending(path: "articles/04-letters/article.yaml")
                try Data(("id: shared-letters\n" + (try String(contentsOf: fields, encoding: .utf8))).utf8).write(to: fields)
                let yaml = source.appending(path: "issue.yaml")
                let text = try String(contentsOf: yaml, encoding: .utf8).replacingOccurrences(of: "apple_id: com.example.harbour.2026-01", with: "apple_id: \(appleID)")
                try Data(text.utf8).write(to: yaml)
            }
            return zip.deletingLastPathComponent().appending(path: "\(appleID).zip")
        }
        #expect(try Harness.galley(["import", try issue("org.example.a").path, try issue("org.example.b").path, "--store", store]).status == 0)
        let ambiguous = try Harness.galley(["article", "show", "shared-letters", "--store", store])
        #expect(ambiguous.status == 2)
        #expect(ambiguous.stderr.contains("2 issues have an article `shared-letters`"))
        let one = try Harness.galley(["article", "show", "shared-letters", "--issue", "org.example.b", "--store", store, "--json"])
        #expect(one.status == 0)
        #expect(try Harness.galley(["articles", "--issue", "org.example.a", "--store", store, "--json"]).stdout.contains("shared-letters"))
        #expect(try Harness.galley(["articles", "--issue", "org.example.b", "--store", store, "--json"]).stdout.contains("shared-letters"))
        // serve names the issue with ?issue=, and says so in its own terms.
        let server = try Harness.listening(["serve", "--store", store, "--port", "0", "--json"])
        defer { server.stop() }
        let fetch = """
            import json, sys, urllib.error, urllib.request
            for path in sys.argv[2:]:
                try:
                    with urllib.request.urlopen("http://127.0.0.1:" + sys.argv[1] + path) as r:
                        print(r.status, r.headers["Content-Type"].split(";")[0])
                except urllib.error.HTTPError as e:
                    print(e.code, json.load(e)["error"]["hint"])
            """
        let answers = try Harness.tool("python3", ["-c", fetch, String(server.port), "/articles/shared-letters",
                                                   "/articles/shared-letters?issue=org.example.b", "/articles/shared-letters/page?issue=org.example.a"])
        #expect(answers.stdout == """
            404 Name the issue: /articles/shared-letters?issue=APPLE_ID.
            200 application/json
            200 text/html

            """, "\(answers.stderr)")
        // Deleting one issue leaves the other's article alone.
        #expect(try Harness.galley(["delete", "org.example.a", "--yes", "--store", store]).status == 0)
        #expect(try Harness.galley(["article", "show", "shared-letters", "--store", store]).status == 0)
    }

    @Test func deleteRemovesTheIssueAndNothingElse() throws {
        let store = try store()
        #expect(try Harness.galley(["import", try packExample().path, "--store", store]).status == 0)
        #expect(try Harness.galley(["delete", appleID, "--store", store]).status == 2, "asks, and refuses without a terminal")
        #expect(try Harness.galley(["delete", appleID, "--yes", "--store", store]).status == 0)
        #expect((try Harness.galley(["issues", "--store", store, "--json"]).json?["issues"] as? [Any])?.isEmpty == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store + "/issues").isEmpty)
        #expect(try Harness.galley(["store", "check", "--store", store]).status == 0)
    }

    /// Queries, an import that changes nothing and a refused one leave no write-ahead log or
    /// shared-memory index beside the database (read-only connections made them and never took
    /// them away), and the database byte-identical.
    @Test func readsAndNoOpImportsLeaveNoLogBesideTheDatabase() throws {
        let store = try store()
        let zip = Harness.fixtures.appending(path: "zips/example-valid.zip").path
        #expect(try Harness.galley(["import", zip, "--store", store]).status == 0)
        let database = try Data(contentsOf: URL(fileURLWithPath: store + "/store.sqlite"))
        let runs: [([String], Int32)] = [
            (["issues"], 0), (["search", "title"], 0), (["import", zip], 0),
            (["import", Harness.fixtures.appending(path: "zips/missing-title-error.zip").path], 1), (["store", "check"], 0),
        ]
        for (arguments, status) in runs {
            #expect(try Harness.galley(arguments + ["--store", store]).status == status, "\(arguments)")
            let names = try FileManager.default.contentsOfDirectory(atPath: store)
            #expect(!names.contains { $0.hasSuffix("-wal") || $0.hasSuffix("-shm") }, "\(arguments): \(names.sorted())")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/store.sqlite")) == database)
    }

    @Test func hostileZipsAreRefusedAndTheStoreIsUntouched() throws {
        let store = try store()
        #expect(try Harness.galley(["import", try packExample().path, "--store", store]).status == 0)
        let before = try Harness.snapshot(store)
        let parent = URL(fileURLWithPath: store).deletingLastPathComponent().path
        let outsideBefore = try FileManager.default.contentsOfDirectory(atPath: parent).sorted()
        let corpus = Harness.fixtures.appending(path: "zips")
        // older-format-error.zip is an error for validate (today's Dumpling crashes on it) but the
        // store reads it safely: `olderFormatsAreImportedWithAWarning` imports it.
        for name in try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
        where name.contains("-error") && name != "older-format-error.zip" {
            let result = try Harness.galley(["import", corpus.appending(path: name).path, "--store", store])
            #expect(result.status == 1, "\(name): \(result.stderr)")
        }
        #expect(try Harness.snapshot(store) == before, "the store's files are byte-identical")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent).sorted() == outsideBefore, "nothing appeared outside")
    }

    /// What is not a zip at all is refused before the store is opened, with exit 2 and what to do:
    /// a FIFO must not block the import, a source folder is packed first.
    @Test func inputsThatAreNotZipsAreRefusedWithoutCreatingTheStore() throws {
        let store = try store()
        let scratch = try Harness.temporaryDirectory()
        let fifo = scratch.appending(path: "issue.zip")
        #expect(mkfifo(fifo.path, 0o644) == 0)
        let cases: [(String, String)] = [
            (fifo.path, "not a regular file"), ("/dev/zero", "not a regular file"),
            (Harness.example.path, "galley pack"), (scratch.appending(path: "missing.zip").path, "no such file"),
        ]
        for (path, says) in cases {
            let result = try Harness.galley(["import", path, "--store", store])
            #expect(result.status == 2, "\(path)")
            #expect(result.stderr.contains(says), "\(path): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: store), "no store was created")
    }

    @Test func aFolderOfZipsImportsEachZipInNameOrder() throws {
        let store = try store()
        let folder = try Harness.temporaryDirectory()
        for name in ["example-valid.zip", "missing-file-error.zip"] {
            try FileManager.default.copyItem(at: Harness.fixtures.appending(path: "zips/\(name)"), to: folder.appending(path: name))
        }
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", folder.path]).status == 0)
        let result = try Harness.galley(["import", folder.path, "--store", store, "--json"])
        #expect(result.status == 1, "one zip of three is refused")
        let outcomes = Harness.imports(result)
        #expect(outcomes.compactMap { $0["status"] as? String } == ["imported", "imported", "refused"])
        #expect(outcomes.compactMap { $0["path"] as? String }.map { URL(fileURLWithPath: $0).lastPathComponent }
            == ["com.example.harbour.2026-01.zip", "example-valid.zip", "missing-file-error.zip"])
    }

    @Test func queriesNeverCreateAStoreAndSayWhyAListIsEmpty() throws {
        let missing = try Harness.temporaryDirectory().appending(path: "a/b/store")
        for arguments in [["issues"], ["articles"], ["assets"], ["search", "ferry"], ["store", "check"], ["store", "gc"],
                          ["delete", "x", "--yes"], ["issue", "show", "x"]] {
            let result = try Harness.galley(arguments + ["--store", missing.path])
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains("no store here") && result.stderr.contains("galley import"), "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: missing.deletingLastPathComponent().deletingLastPathComponent().path))

        let store = try store()
        let zip = Harness.fixtures.appending(path: "zips/example-valid.zip").path
        #expect(try Harness.galley(["import", zip, "--store", store]).status == 0)
        #expect(try Harness.galley(["delete", "example-valid", "--yes", "--store", store]).status == 0)
        let empty = try Harness.galley(["issues", "--store", store])
        #expect(empty.status == 0 && empty.stdout.isEmpty)
        #expect(empty.stderr.contains("holds no issues yet"), "\(empty.stderr)")
    }

    @Test func filesystemFailuresAreSaidInWords() throws {
        let file = try Harness.temporaryDirectory().appending(path: "not-a-folder")
        try Data("x".utf8).write(to: file)
        let zip = Harness.fixtures.appending(path: "zips/example-valid.zip").path
        let result = try Harness.galley(["import", zip, "--store", file.path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("a part of the path is a file, not a folder"), "\(result.stderr)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain") && !result.stderr.contains("Code="))
    }

    /// A full disk while the files are written (here a file-size limit, `ulimit -f`) refuses
    /// the import in words, and the store is as it was: its issue still there, nothing left in
    /// staging, `store check` clean. Each writer meets it: the kept zip's copy (the packed
    /// example, whose zip is over the limit), the extraction's (a zip of a few KiB whose cover
    /// inflates past it), and latest.json's, written from its checks' thread (a small zip whose
    /// latest.json inflates past it).
    @Test(arguments: ["packed example", "zips/deflated-media-valid.zip", "large latest.json"])
    func aFullDiskDuringTheImportLeavesTheStoreAsItWas(zip name: String) throws {
        let store = try store()
        let first = try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", store, "-q"])
        #expect(first.status == 0, "\(first.stderr)")
        let zip = name.hasSuffix(".zip") ? Harness.fixtures.appending(path: name)
            : name == "large latest.json" ? try packLargeManifest() : try packExample()
        let limited = try Harness.galley(["import", zip.path, "--store", store, "--force"], fileSizeLimit: 256)
        #expect(limited.status == 2, "\(limited.stdout)\(limited.stderr)")
        let expected = name.hasSuffix(".zip") ? "cover.jpg: cannot write: File too large"
            : name == "large latest.json" ? "latest.json: cannot write: File too large" : ".zip: File too large"
        #expect(limited.stderr.contains(expected), "\(limited.stderr)")
        let listed = try Harness.galley(["issues", "--store", store, "--json"])
        let ids = (listed.json?["issues"] as? [[String: Any]] ?? []).compactMap { $0["apple_id"] as? String }
        #expect(ids == ["example-valid"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: store + "/staging").isEmpty, "nothing left in staging")
        #expect(try Harness.galley(["store", "check", "--store", store, "-q"]).status == 0)
        // With room again, the same zip imports (the fixture shares the first issue's global id:
        // `--force` replaces it).
        #expect(try Harness.galley(["import", zip.path, "--store", store, "-q", "--force"]).status == 0)
    }

    /// A store that cannot be made for want of room (a file-size limit under which its
    /// database's first pages cannot be written) is not left behind half made: the command
    /// says so with a hint on room, also in `--json`, and the folders made for it are gone (an
    /// empty folder given as the store is left as it was, empty); with room, the same command
    /// makes it. The same for `--articles`.
    @Test(arguments: ["zip", "articles", "zip into an empty folder"])
    func aStoreThatCannotBeMadeForWantOfRoomIsNotLeftBehind(input: String) throws {
        let parent = try Harness.temporaryDirectory().appending(path: "new")
        let store = parent.appending(path: "store").path
        let emptyFolder = input.hasSuffix("empty folder")
        if emptyFolder { try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true) }
        let what = input.hasPrefix("zip") ? [Harness.fixtures.appending(path: "zips/deflated-media-valid.zip").path]
            : ["--articles", IndependentArticlesTests.wordpressSample, "--key-map", IndependentArticlesTests.wordpress]
        let limited = try Harness.galley(["import"] + what + ["--store", store], fileSizeLimit: 16)
        #expect(limited.status == 2, "\(limited.stdout)\(limited.stderr)")
        #expect(limited.stderr.contains("cannot open the store: disk I/O error"), "\(limited.stderr)")
        #expect(limited.stderr.contains("The disk may be full, or a limit on file sizes reached (`ulimit -f`)"), "\(limited.stderr)")
        if emptyFolder {
            #expect(try FileManager.default.contentsOfDirectory(atPath: store).isEmpty, "the folder is as it was")
        } else {
            #expect(!FileManager.default.fileExists(atPath: parent.path), "the half-made store is gone")
        }
        let json = try Harness.galley(["import"] + what + ["--store", store, "--json"], fileSizeLimit: 16)
        #expect(json.status == 2)
        #expect(json.stdout.contains("`ulimit -f`"), "the hint is in the JSON document too: \(json.stdout)")
        #expect(try Harness.galley(["import"] + what + ["--store", store, "-q"]).status == 0)
        #expect(try Harness.galley(["store", "check", "--store", store, "-q"]).status == 0)
    }

    /// `minimal-valid` with 400 KB of prose in its first article: a zip of some 30 KB whose
    /// latest.json inflates to over 400 KB.
    func packLargeManifest() throws -> URL {
        let source = try Harness.copy(Harness.fixtures.appending(path: "sources/minimal-valid"))
        let article = source.appending(path: "articles/01-first/article.md")
        let paragraph = "The harbour master counted the boats again, and again the tally came out one short.\n\n"
        let text = try String(contentsOf: article, encoding: .utf8) + "\n" + String(repeating: paragraph, count: 4_800)
        try Data(text.utf8).write(to: article)
        let out = try Harness.temporaryDirectory()
        let result = try Harness.galley(["pack", source.path, "-o", out.path + "/", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let path = try #require(result.json?["path"] as? String, "\(result.stdout)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size < 128 * 1024, "the zip itself is under the limit")
        return URL(fileURLWithPath: path)
    }

    @Test func anEditedIssueWithTheSameLastUpdatedIsRefusedNotSkipped() throws {
        let store = try store()
        let work = try Harness.temporaryDirectory()
        let source = try Harness.copy(Harness.example)
        #expect(try Harness.galley(["pack", source.path, "-o", work.appending(path: "v1/").path]).status == 0)
        #expect(try Harness.galley(["import", work.appending(path: "v1").path, "--store", store]).status == 0)
        let before = try HostileInputTests.content(URL(fileURLWithPath: store))

        // The editor changes the title and packs again, with the same last_updated.
        let issueFile = source.appending(path: "issue.yaml")
        let text = try String(contentsOf: issueFile, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "title: \"Winter on the Water\"", with: "title: \"Winter on the Harbour\"").utf8).write(to: issueFile)
        #expect(text.contains("title: \"Winter on the Water\""))
        #expect(try Harness.galley(["pack", source.path, "-o", work.appending(path: "v2/").path]).status == 0)
        let refused = try Harness.galley(["import", work.appending(path: "v2").path, "--store", store])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("error import.same-version-changed") && refused.stderr.contains("--bump"), "\(refused.stderr)")
        #expect(try HostileInputTests.content(URL(fileURLWithPath: store)) == before, "the store is as it was")

        // The same zip again is still a no-op; a bumped pack replaces the issue.
        let again = try Harness.galley(["import", work.appending(path: "v1").path, "--store", store])
        #expect(again.status == 0 && again.stdout.contains("nothing changed"))
        #expect(try Harness.galley(["pack", source.path, "-o", work.appending(path: "v3/").path, "--bump"]).status == 0)
        let bumped = try Harness.galley(["import", work.appending(path: "v3").path, "--store", store])
        #expect(bumped.status == 0 && bumped.stdout.contains("replaced"), "\(bumped.stdout)\(bumped.stderr)")
        let issues = try Harness.galley(["issues", "--store", store])
        #expect(issues.stdout.contains("Winter on the Harbour"))
        // --json says which version each pack made.
        func version(_ arguments: [String]) throws -> String? {
            try Harness.galley(["pack", source.path, "--json"] + arguments).json?["last_updated"] as? String
        }
        let plain = try #require(try version(["-o", work.appending(path: "v4/").path]))
        let bumpedVersion = try #require(try version(["-o", work.appending(path: "v5/").path, "--bump"]))
        #expect(plain == "2026-01-04T18:30:00.000Z" && bumpedVersion > plain, "\(plain) \(bumpedVersion)")
    }

    @Test func twoIssuesSharingAGlobalIDAreNamedBothInTheRefusal() throws {
        let store = try store()
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", store]).status == 0)
        let other = try Harness.galley(["import", Harness.fixtures.appending(path: "zips/svg-clean-valid.zip").path, "--store", store])
        #expect(other.status == 1)
        #expect(other.stderr.contains("`example-valid` (the same global id, 5f0000000000000000000010, as this zip's `svg-clean-valid`)"),
                "\(other.stderr)")
    }

    /// Every command that writes a store says which one, the default one included (it is a
    /// folder the user does not see): import, import --articles, store gc and delete.
    @Test func everyWriteSaysWhichStore() throws {
        let work = try Harness.temporaryDirectory()
        let environment = ["XDG_DATA_HOME": work.appending(path: "data").path]
        let named = "the store at \(work.appending(path: "data/galley").path)"
        let zip = Harness.fixtures.appending(path: "zips/example-valid.zip").path
        let native = work.appending(path: "articles.json")
        try Data(#"{"articles": [{"global_id": "note-1", "title": "A note"}]}"#.utf8).write(to: native)
        for arguments in [["import", zip], ["import", "--articles", native.path], ["store", "gc"], ["delete", "example-valid", "--yes"]] {
            let result = try Harness.galley(arguments, environment: environment)
            #expect(result.status == 0 && result.stdout.contains(named), "\(arguments): \(result.stdout)\(result.stderr)")
        }
        let quiet = try Harness.galley(["import", zip, "-q"], environment: environment)
        #expect(quiet.status == 0 && quiet.stdout.isEmpty)
    }

    @Test func olderFormatsAreImportedWithAWarning() throws {
        let store = try store()
        let zip = Harness.fixtures.appending(path: "zips/older-format-error.zip").path
        let imported = try Harness.galley(["import", zip, "--store", store])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("warning manifest.older-format"), "\(imported.stderr)")
        #expect(imported.stdout.contains("older-format-error: imported: 1 article, 3 assets"), "\(imported.stdout)")
        // The legacy `metadata` stands in for customMeta; the missing date is empty, not a crash.
        let meta = try Harness.galley(["article", "show", "5f0000000000000000000020", "--meta", "readingTime", "--store", store])
        #expect(meta.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "4", "\(meta.stdout)\(meta.stderr)")
        let articles = try Harness.galley(["articles", "--by-date", "--store", store, "--json"])
        #expect(articles.status == 0 && articles.stdout.contains("\"date\" : \"\""), "\(articles.stdout)")
        let again = try Harness.galley(["import", zip, "--store", store, "--json"])
        #expect(again.stdout.contains("\"id\" : \"manifest.older-format\""), "--json lists the warnings: \(again.stdout)")
        #expect(try Harness.galley(["store", "check", "--store", store]).status == 0)
    }

    /// A zip refused only by its content (a CRC, read in the extracting pass, after the store
    /// was opened to compare versions) leaves no store behind either, nor the folders on its
    /// way; beside a zip that imports, the store stays.
    @Test func aZipRefusedByItsContentCreatesNoStore() throws {
        let parent = try Harness.temporaryDirectory()
        let store = parent.appending(path: "new/deep/store").path
        let bad = Harness.fixtures.appending(path: "zips/bad-crc-error.zip").path
        let refused = try Harness.galley(["import", bad, "--store", store, "--json"])
        #expect(refused.status == 1)
        #expect(Harness.imports(refused).first?["status"] as? String == "refused")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path).isEmpty, "nothing was left on the way")
        let mixed = try Harness.galley(["import", bad, Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", store, "-q"])
        #expect(mixed.status == 1)
        #expect(try Harness.galley(["issues", "--store", store, "--json"]).status == 0, "the store with the imported issue stays")
    }

    /// On a terminal, import draws its bar both when it extracts and when an unchanged zip is
    /// only checked (a long read of a big zip otherwise shows nothing); off one, no bar.
    @Test func aTerminalShowsTheImportsProgressEvenForAnUnchangedZip() throws {
        let store = try store()
        let zip = Harness.fixtures.appending(path: "zips/example-valid.zip").path
        let pty = Harness.root.appending(path: "Tests/Support/pty_run.py").path
        for expected in ["imported", "already in the store"] {
            let shown = try Harness.tool("python3", [pty, Harness.galley.path, "import", zip, "--store", store])
            #expect(shown.status == 0 && shown.stdout.contains(expected), "\(shown.stdout)")
            #expect(shown.stderr.contains("importing") && shown.stderr.contains("100%"), "\(expected): \(shown.stderr.debugDescription)")
        }
        let plain = try Harness.galley(["import", zip, "--store", store])
        #expect(plain.status == 0 && !plain.stderr.contains("importing"), "no bar off a terminal")
    }

    @Test func aMissingMandatoryKeyIsRefusedNamingTheKeyAndTheArticle() throws {
        let store = try store()
        let zip = Harness.fixtures.appending(path: "zips/missing-title-error.zip").path
        let refused = try Harness.galley(["import", zip, "--store", store])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("error manifest.key-missing: article 1 has no `title`"), "\(refused.stderr)")
        #expect(refused.stderr.contains("articles[0].title"))
        #expect(!FileManager.default.fileExists(atPath: store), "a refused zip never creates the store")
    }

    @Test func theVideosExtensionIsImported() throws {
        let store = try store()
        #expect(try Harness.galley(["import", try packExample().path, "--store", store]).status == 0)
        let videos = try Harness.galley(["assets", "--type", "video", "--store", store, "--json"])
        let list = videos.json?["assets"] as? [[String: Any]] ?? []
        #expect(list.count == 1, "\(videos.stdout)\(videos.stderr)")
        #expect(list.first?["kind"] as? String == "video")
        if let path = list.first?["path"] as? String {
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    @Test(arguments: Backend.all)
    func twoImportsAtOnceBothEndCorrectly(backend: Backend) throws {
        let store = try backend.store()
        let a = try packExample()
        let b = try packExample(lastUpdated: "2026-01-10T09:00:00Z")
        let first = Process()
        first.executableURL = Harness.galley
        first.arguments = ["import", a.path, "--store", store]
        first.standardOutput = FileHandle.nullDevice
        first.standardError = FileHandle.nullDevice
        try first.run()
        let second = try Harness.galley(["import", b.path, "--store", store])
        first.waitUntilExit()
        #expect(first.terminationStatus == 0 || first.terminationStatus == 1, "the older one may be refused if it came second")
        #expect(second.status == 0)
        let check = try Harness.galley(["store", "check", "--store", store])
        #expect(check.status == 0, "\(check.stdout)")
        #expect(try Harness.galley(["issue", "show", appleID, "--store", store]).stdout.contains("updated 2026-01-10T09:00:00.000Z"))
    }

    /// Two first imports at once into a store that does not exist yet (nor its parent): one
    /// makes it, the other waits for it, both issues are in it, nothing is left half made.
    @Test func twoFirstImportsAtOnceMakeOneStore() throws {
        let work = try Harness.temporaryDirectory()
        let zips = [Harness.fixtures.appending(path: "zips/example-valid.zip").path, try packExample().path]
        for round in 1...20 {
            let store = work.appending(path: "round-\(round)/store").path
            let processes = zips.map { zip in
                let process = Process()
                process.executableURL = Harness.galley
                process.arguments = ["import", zip, "--store", store, "-q"]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = Pipe()
                return process
            }
            for process in processes { try process.run() }
            for process in processes { process.waitUntilExit() }
            for process in processes {
                let errors = (process.standardError as? Pipe).map { String(decoding: $0.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) } ?? ""
                #expect(process.terminationStatus == 0, "round \(round): \(errors)")
            }
            let listed = try Harness.galley(["issues", "--store", store, "--json"])
            let issues = (listed.json?["issues"] as? [[String: Any]] ?? []).compactMap { $0["apple_id"] as? String }.sorted()
            #expect(issues == [appleID, "example-valid"], "round \(round): \(listed.stdout)\(listed.stderr)")
            #expect(try Harness.galley(["store", "check", "--store", store, "-q"]).status == 0, "round \(round)")
        }
    }

    @Test(arguments: Backend.all)
    func anImportKilledAtAnyMomentLeavesTheOldOrTheNewIssueComplete(backend: Backend) throws {
        let store = try backend.store()
        #expect(try Harness.galley(["import", try packExample().path, "--store", store]).status == 0)
        // A newer version with a large file, so the import takes a while.
        let big = try packExample(lastUpdated: "2026-02-01T00:00:00Z") { source in
            var bytes = [UInt8](repeating: 0, count: 40_000_000)
            bytes.replaceSubrange(0..<4, with: [0xFF, 0xD8, 0xFF, 0xE0])
            for i in stride(from: 4, to: bytes.count, by: 4096) { bytes[i] = UInt8(truncatingIfNeeded: i &* 31) }
            try Data(bytes).write(to: source.appending(path: "cover.jpg"))
        }
        for delay in [0.02, 0.08, 0.2, 0.5] {
            let process = Process()
            process.executableURL = Harness.galley
            process.arguments = ["import", big.path, "--store", store, "--force"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            // The next command cleans up; the store then holds one complete version.
            let shown = try Harness.galley(["issue", "show", appleID, "--store", store])
            #expect(shown.status == 0)
            #expect(shown.stdout.contains("updated 2026-01-04") || shown.stdout.contains("updated 2026-02-01"))
            let check = try Harness.galley(["store", "check", "--store", store])
            #expect(check.status == 0, "after SIGKILL at \(delay) s: \(check.stdout)")
        }
    }
}
