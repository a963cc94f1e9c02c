import Foundation
import Testing

/// Independent articles (no issue) and key maps for foreign feeds, run through the built binary:
/// `key-map check`, `import --articles`, `articles --independent`, serve's
/// /independent-articles and `sync` of article feeds. Merges go by global id, without
/// duplicates, newest first, old items kept, and a merge of the same items writes nothing.
@Suite struct IndependentArticlesTests {
    static let maps = Harness.root.appending(path: "Examples/key-maps")
    static let wordpress = maps.appending(path: "wordpress-posts.yaml").path
    static let wordpressSample = maps.appending(path: "wordpress-posts.sample.json").path

    static func independent(_ store: URL) throws -> [String] {
        let listed = try Harness.galley(["articles", "--independent", "--store", store.path, "--json"])
        return (listed.json?["articles"] as? [[String: Any]] ?? []).compactMap { $0["global_id"] as? String }
    }

    /// The shipped maps map their samples whole; a map with an unknown field is refused with
    /// its line and column; a sample with bad items has each skipped and named.
    @Test func keyMapCheckShowsWhatEachItemBecomes() throws {
        for name in ["wordpress-posts", "grails-announcements"] {
            let result = try Harness.galley(["key-map", "check", Self.maps.appending(path: "\(name).yaml").path,
                                             Self.maps.appending(path: "\(name).sample.json").path, "--json"])
            #expect(result.status == 0, "\(name): \(result.stdout)\(result.stderr)")
            #expect((result.json?["articles"] as? [Any])?.count == 2 && (result.json?["skipped"] as? [Any])?.isEmpty == true, "\(name)")
        }
        let bad = try Harness.galley(["key-map", "check", Harness.fixtures.appending(path: "key-maps/unknown-field-error.yaml").path, "--json"])
        #expect(bad.status == 2)
        let error = bad.json?["error"] as? [String: Any]
        #expect(error?["id"] as? String == "config.invalid")
        #expect((error?["path"] as? String)?.hasSuffix("unknown-field-error.yaml:6:3") == true, "\(bad.stdout)")

        // Aliases of aliases in a `default:` (9^10 values): refused at once, not expanded.
        // Under `timeout`, so that a regression fails instead of hanging the suite.
        let bomb = try Harness.tool("timeout", ["60", Harness.galley.path, "key-map", "check",
                                                Harness.fixtures.appending(path: "key-maps/alias-bomb-error.yaml").path, "--json"])
        #expect(bomb.status == 2, "\(bomb.status): \(bomb.stdout)\(bomb.stderr)")
        let bombError = bomb.json?["error"] as? [String: Any]
        #expect(bombError?["id"] as? String == "config.invalid")
        #expect((bombError?["message"] as? String)?.contains("more than 100,000 keys, values and list items") == true, "\(bomb.stdout)")

        let sample = Harness.fixtures.appending(path: "key-maps/wordpress-posts-four-skipped.json").path
        let mapped = try Harness.galley(["key-map", "check", Self.wordpress, sample, "--json"])
        #expect(mapped.status == 1)
        let articles = mapped.json?["articles"] as? [[String: Any]] ?? []
        #expect(articles.map { $0["global_id"] as? String } == ["1", "6"])
        #expect(articles.last?["date"] as? String == "2026-01-01T10:00:00.000Z", "an offset date is kept as UTC")
        #expect(articles.last?["keywords"] as? [String] == ["a", "b"], "a comma-separated text is a list")
        let skipped = mapped.json?["skipped"] as? [[String: Any]] ?? []
        let summary = skipped.map { "\($0["index"] ?? "") \($0["target"] ?? "") \($0["pointer"] as? String ?? "-")" }
        #expect(summary == ["1 title /title/rendered", "2 date /date_gmt", "3 global_id /id", "4 global_id -"], "\(summary)")
        // In words, each on standard error with the item, pointer and field.
        let words = try Harness.galley(["key-map", "check", Self.wordpress, sample])
        #expect(words.stderr.contains("#/2/date_gmt: item 2 (global_id 3): /date_gmt `yesterday` matches none of the formats iso8601"), "\(words.stderr)")
        try SyncCommandTests.expectSchemas([("key-map-check", mapped.stdout)])
    }

    /// `import --articles` merges: added, then unchanged (and not a byte written), then one
    /// updated; a second file's articles join the first's, which stay; newest first.
    @Test func importedArticlesMergeByGlobalID() throws {
        let work = try Harness.temporaryDirectory()
        let store = work.appending(path: "store")
        let first = try Harness.galley(["import", "--articles", Self.wordpressSample, "--key-map", Self.wordpress, "--store", store.path, "--json"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(first.json?["added"] as? [String] == ["4412", "4398"])
        let bytes = try Data(contentsOf: store.appending(path: "store.sqlite"))
        let again = try Harness.galley(["import", "--articles", Self.wordpressSample, "--key-map", Self.wordpress, "--store", store.path, "--json"])
        #expect(again.json?["unchanged"] as? Int == 2 && (again.json?["added"] as? [String])?.isEmpty == true)
        #expect(try Data(contentsOf: store.appending(path: "store.sqlite")) == bytes, "the same items write nothing")

        let edited = work.appending(path: "edited.json")
        try Data(try String(contentsOfFile: Self.wordpressSample, encoding: .utf8)
            .replacingOccurrences(of: "Winter ferry timetable", with: "Winter ferry timetable (revised)").utf8).write(to: edited)
        let updated = try Harness.galley(["import", "--articles", edited.path, "--key-map", Self.wordpress, "--store", store.path, "--json"])
        #expect(updated.json?["updated"] as? [String] == ["4398"] && updated.json?["unchanged"] as? Int == 1)

        // Galley's own format, and an older article: the others stay; newest first.
        let native = work.appending(path: "native.json")
        try Data(#"{"articles": [{"global_id": "note-1", "title": "A note", "date": "2025-12-01T00:00:00Z"}]}"#.utf8).write(to: native)
        #expect(try Harness.galley(["import", "--articles", native.path, "--store", store.path, "-q"]).status == 0)
        #expect(try Self.independent(store) == ["4412", "4398", "note-1"])
        #expect(try Harness.galley(["store", "check", "--store", store.path, "-q"]).status == 0)
        let listed = try Harness.galley(["articles", "--independent", "--store", store.path, "--json"])
        try SyncCommandTests.expectSchemas([("import-articles", first.stdout), ("import-articles", updated.stdout),
                                            ("independent-articles", listed.stdout)])
        // A file that is not the shape: an error naming the pointer, nothing merged.
        let wrong = try Harness.galley(["import", "--articles", Self.wordpressSample, "--store", store.path, "--json"])
        #expect(wrong.status == 2 && ((wrong.json?["error"] as? [String: Any])?["message"] as? String)?.contains("/articles") == true,
                "\(wrong.stdout)")
    }

    /// A foreign body goes through the sanitizer zip bodies are rendered with: no script, event
    /// handler, `javascript:` URL or frame reaches the store, `articles --independent` or
    /// serve's /independent-articles; the summary names each item and what its body lost, in
    /// words and in JSON; a clean body loses only its comments and is not named.
    @Test func foreignBodiesAreSanitizedBeforeTheyAreStored() throws {
        let work = try Harness.temporaryDirectory()
        let store = work.appending(path: "store")
        let feed = Harness.fixtures.appending(path: "key-maps/wordpress-posts-hostile-bodies.json").path
        let imported = try Harness.galley(["import", "--articles", feed, "--key-map", Self.wordpress, "--store", store.path, "--json"])
        #expect(imported.status == 0, "\(imported.stdout)\(imported.stderr)")
        let sanitized = imported.json?["sanitized"] as? [[String: Any]] ?? []
        #expect(sanitized.map { $0["global_id"] as? String } == ["501"], "\(imported.stdout)")
        #expect(sanitized.first?["removed"] as? [String]
                    == ["<iframe>", "<script>", "javascript: in href on <a>", "onerror on <img>"], "\(imported.stdout)")

        let listed = try Harness.galley(["articles", "--independent", "--store", store.path, "--json"])
        let bodies = (listed.json?["articles"] as? [[String: Any]] ?? []).map { $0["body"] as? String ?? "" }
        #expect(bodies.count == 2)
        for body in bodies {
            for hostile in ["<script", "onerror", "javascript:", "<iframe", "<!--"] {
                #expect(!body.contains(hostile), "\(hostile) in a stored body: \(body)")
            }
        }
        #expect(bodies.first?.contains("<img src=\"https://blog.example.com/quay.jpg\" alt=\"The quay\">") == true, "\(bodies)")
        #expect(bodies.last?.contains("<p>Ferries leave every hour.</p>") == true, "\(bodies)")
        // A title the map reads with `html: text`: WordPress's entities decoded, its markup gone.
        let titles = (listed.json?["articles"] as? [[String: Any]] ?? []).map { $0["title"] as? String ?? "" }
        #expect(titles.last == "The quay’s new café & bakery", "\(titles)")

        let server = try Harness.listening(["serve", "--store", store.path, "--port", "0", "--json"])
        defer { server.stop() }
        let served = try Harness.python("""
            import sys, urllib.request
            print(urllib.request.urlopen("http://127.0.0.1:%s/independent-articles" % sys.argv[1]).read().decode())
            """, [String(server.port)])
        #expect(served.contains("quay.jpg") && !served.contains("<script") && !served.contains("onerror"), "\(served)")

        // In words: a note naming the item and what went, and the count in the summary.
        let words = try Harness.galley(["import", "--articles", feed, "--key-map", Self.wordpress, "--store",
                                        work.appending(path: "other").path])
        #expect(words.stderr.contains("#/0: item 0 (global_id 501): its body was stored without <iframe>, <script>"), "\(words.stderr)")
        #expect(words.stdout.contains("2 added, 0 updated, 0 unchanged, 1 sanitized"), "\(words.stdout)")
        let checked = try Harness.galley(["key-map", "check", Self.wordpress, feed, "--json"])
        #expect((checked.json?["sanitized"] as? [Any])?.count == 1, "\(checked.stdout)")
        try SyncCommandTests.expectSchemas([("import-articles", imported.stdout), ("independent-articles", listed.stdout),
                                            ("key-map-check", checked.stdout)])
    }

    /// A file that is not JSON is refused with the line and column where it stops being JSON,
    /// before any store is made; a sample nested past the parser's depth says so; a file that
    /// is missing is `input.not-found`.
    @Test func aMalformedFileSaysWhereAndMakesNoStore() throws {
        let work = try Harness.temporaryDirectory()
        let bad = work.appending(path: "bad.json")
        try Data(#"{"articles": [1, 2,, 3]}"#.utf8).write(to: bad)
        let store = work.appending(path: "store")
        let imported = try Harness.galley(["import", "--articles", bad.path, "--store", store.path, "--json"])
        #expect(imported.status == 2)
        let error = imported.json?["error"] as? [String: Any]
        #expect(error?["id"] as? String == "input.unreadable")
        #expect(error?["message"] as? String == "the articles file is not valid JSON: unexpected character", "\(imported.stdout)")
        #expect(error?["path"] as? String == bad.path + ":1:20", "where it stops being JSON, as key map errors say it")
        #expect(!FileManager.default.fileExists(atPath: store.path), "a refused file makes no store")

        let latin1 = work.appending(path: "latin1.json")
        try Data([0x7B, 0x22, 0xE9, 0x22, 0x3A, 0x31, 0x7D]).write(to: latin1)  // {"é":1} in Latin-1
        let notText = try Harness.galley(["import", "--articles", latin1.path, "--store", store.path, "--json"])
        #expect(notText.status == 2 && (notText.json?["error"] as? [String: Any])?["message"] as? String == "the articles file is not UTF-8 text",
                "\(notText.stdout)")
        #expect(!FileManager.default.fileExists(atPath: store.path))
        let missing = try Harness.galley(["key-map", "check", Self.wordpress, work.appending(path: "none.json").path, "--json"])
        #expect(missing.status == 2 && (missing.json?["error"] as? [String: Any])?["id"] as? String == "input.not-found", "\(missing.stdout)")

        let deep = work.appending(path: "deep.json")
        try Data((String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)).utf8).write(to: deep)
        let checked = try Harness.galley(["key-map", "check", Self.wordpress, deep.path])
        #expect(checked.status == 2)
        #expect(checked.stderr.contains("\(deep.path):1:257: the sample is not valid JSON: nested deeper than 256 levels"), "\(checked.stderr)")
    }

    /// serve's /independent-articles is a feed another store follows (merged, then a 304);
    /// a foreign feed is followed through a key map, with bad items skipped and reported.
    /// WordPress pages its REST API: a sync follows `Link: <...>; rel="next"` (absolute or
    /// relative) on the feed's own origin, up to --max-pages, and keeps an article that moved
    /// between pages once. A link to another host is not followed.
    @Test func syncFollowsThePagesOfAPagedFeed() throws {
        let work = try Harness.temporaryDirectory()
        let script = """
            import http.server, json, sys, threading
            def post(n, title):
                return {"id": n, "title": {"rendered": title}, "date_gmt": "2026-01-%02dT10:00:00" % (n - 100)}
            class Pages(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    port = self.server.server_address[1]
                    page = int(self.path.split("page=")[1]) if "page=" in self.path else 1
                    items, links = {
                        1: ([post(101, "One"), post(102, "Two")], ['<http://127.0.0.1:%d/posts?page=2>; rel="next"' % port]),
                        2: ([post(102, "Two, moved"), post(103, "Three")],
                            ['</posts?page=1>; rel="prev"', '</posts?page=3>; rel="next"']),
                        3: ([post(104, "Four")], ['<http://localhost:%d/posts?page=4>; rel="next"' % port]),
                        4: ([post(199, "Elsewhere")], []),
                    }[page]
                    body = json.dumps(items).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("X-WP-TotalPages", "3")
                    self.send_header("Link", ", ".join(links))
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *args):
                    pass
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pages)
            print(server.server_address[1], flush=True)
            threading.Timer(120, server.shutdown).start()
            server.serve_forever()
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { process.terminate() }
        let port = try #require(Int(Harness.readLines(output.fileHandleForReading, 1).trimmingCharacters(in: .whitespacesAndNewlines)))
        let feed = "http://127.0.0.1:\(port)/posts"

        let whole = work.appending(path: "whole")
        let synced = try Harness.galley(["sync", feed, "--key-map", Self.wordpress, "--store", whole.path, "--json"])
        #expect(synced.status == 0, "\(synced.stdout)\(synced.stderr)")
        let articles = synced.json?["articles"] as? [String: Any]
        #expect(articles?["added"] as? [String] == ["101", "102", "103", "104"], "\(synced.stdout)")
        #expect(Set(try Self.independent(whole)) == ["101", "102", "103", "104"], "page 4 is on another host")
        let listed = try Harness.galley(["articles", "--independent", "--store", whole.path])
        #expect(listed.stdout.contains("  Two\n") && !listed.stdout.contains("moved"), "the first page's copy: \(listed.stdout)")

        let bounded = work.appending(path: "bounded")
        let first = try Harness.galley(["sync", feed, "--key-map", Self.wordpress, "--max-pages", "2", "--store", bounded.path,
                                        "--events", "json"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let left = SyncCommandTests.events(first.stdout).first { $0["event"] as? String == "feedPagesLeft" }
        #expect(left?["status"] as? String == "read 2 pages of 3", "\(first.stdout)")
        #expect(Set(try Self.independent(bounded)) == ["101", "102", "103"])
        let told = try Harness.galley(["sync", feed, "--key-map", Self.wordpress, "--max-pages", "1", "--store", bounded.path])
        #expect(told.stderr.contains("warning: the feed has more pages than --max-pages: read 1 page of 3"), "\(told.stderr)")
        try SyncCommandTests.expectSchemas(SyncCommandTests.eventLines(first.stdout) + [("sync", synced.stdout)])
        let zero = try Harness.galley(["sync", feed, "--key-map", Self.wordpress, "--max-pages", "0", "--store", bounded.path])
        #expect(zero.status != 0 && zero.stderr.contains("--max-pages must be from 1 to 1000"), "\(zero.stderr)")
    }

    /// RSS and Atom through the shipped map: checked, imported from a file, and synced from a
    /// static host (Python's http.server), as JSON feeds are.
    @Test func rssAndAtomFeedsAreReadThroughTheKeyMap() throws {
        let map = Harness.root.appending(path: "Examples/key-maps/rss-atom.yaml").path
        let rss = Harness.root.appending(path: "Examples/key-maps/rss.sample.xml").path
        let checked = try Harness.galley(["key-map", "check", map, rss, "--json"])
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        let articles = try #require(checked.json?["articles"] as? [[String: Any]])
        #expect(articles.map { $0["title"] as? String ?? "" } == ["The quay\u{2019}s new caf\u{E9} opens", "Winter ferry timetable", "A note without a date"])
        #expect(articles.first?["date"] as? String == "2026-01-14T09:30:00.000Z" && articles.last?["date"] is NSNull)

        let work = try Harness.temporaryDirectory()
        let store = work.appending(path: "reader")
        let imported = try Harness.galley(["import", "--articles", rss, "--key-map", map, "--store", store.path, "--json"])
        #expect(imported.status == 0, "\(imported.stdout)\(imported.stderr)")
        #expect(imported.json?["added"] as? [String] == ["news-1042", "https://news.example.com/2026/01/ferry-timetable/",
                                                                                          "https://news.example.com/notes/undated"])
        // Galley's own format is JSON: an XML file without a map says what to give.
        let unmapped = try Harness.galley(["import", "--articles", rss, "--store", store.path])
        #expect(unmapped.status == 2 && unmapped.stderr.contains("RSS or Atom") && unmapped.stderr.contains("--key-map"), "\(unmapped.stderr)")

        let site = work.appending(path: "site")
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Harness.root.appending(path: "Examples/key-maps/atom.sample.xml"), to: site.appending(path: "feed.atom"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import functools, http.server, sys, threading
            handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
            handler.func.log_message = lambda *args: None
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            print(server.server_address[1], flush=True)
            threading.Timer(120, server.shutdown).start()
            server.serve_forever()
            """, site.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { process.terminate() }
        let port = try #require(Int(Harness.readLines(output.fileHandleForReading, 1).trimmingCharacters(in: .whitespacesAndNewlines)))
        let synced = try Harness.galley(["sync", "http://127.0.0.1:\(port)/feed.atom", "--key-map", map, "--store", store.path, "--json"])
        #expect(synced.status == 0, "\(synced.stdout)\(synced.stderr)")
        #expect((synced.json?["articles"] as? [String: Any])?["added"] as? [String]
                == ["tag:blog.example.org,2026:spring-tides", "tag:blog.example.org,2026:regatta"], "\(synced.stdout)")
        #expect(try Self.independent(store).count == 5)
        try SyncCommandTests.expectSchemas([("sync", synced.stdout)])
    }

    @Test func syncFollowsArticleFeeds() throws {
        let work = try Harness.temporaryDirectory()
        let source = work.appending(path: "source")
        #expect(try Harness.galley(["import", "--articles", Self.wordpressSample, "--key-map", Self.wordpress, "--store", source.path, "-q"]).status == 0)
        let server = try Harness.listening(["serve", "--store", source.path, "--port", "0", "--json"])
        defer { server.stop() }
        let reader = work.appending(path: "reader")
        let feed = "http://127.0.0.1:\(server.port)/independent-articles"
        let first = try Harness.galley(["sync", feed, "--store", reader.path, "--events", "json"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let names = SyncCommandTests.events(first.stdout).map { $0["event"] as? String ?? "" }
        #expect(names == ["feedChanged", "articlesDownloadComplete", "downloadComplete"])
        #expect(try Self.independent(reader) == ["4412", "4398"])
        let second = try Harness.galley(["sync", feed, "--store", reader.path, "--json"])
        #expect(second.json?["unchanged"] as? Bool == true)

        // A foreign feed (WordPress's shape, from the scripted server) through the key map.
        let signature = work.appending(path: "none.sig")
        try Data("none".utf8).write(to: signature)
        let log = work.appending(path: "requests.log")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Harness.root.appending(path: "Tests/Support/fault_server.py").path, "replay",
                             Harness.fixtures.appending(path: "zips/example-valid.zip").path, "example-valid", log.path,
                             Harness.fixtures.appending(path: "key-maps/wordpress-posts-four-skipped.json").path, signature.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { process.terminate() }
        let port = try #require(Int(Harness.readLines(output.fileHandleForReading, 1).trimmingCharacters(in: .whitespacesAndNewlines)))
        let foreign = "http://127.0.0.1:\(port)/feed"
        let mapped = try Harness.galley(["sync", foreign, "--store", reader.path, "--key-map", Self.wordpress, "--json"])
        #expect(mapped.status == 1, "items were skipped: \(mapped.stdout)\(mapped.stderr)")
        let articles = mapped.json?["articles"] as? [String: Any]
        #expect(articles?["added"] as? [String] == ["1", "6"])
        #expect((articles?["skipped"] as? [Any])?.count == 4)
        #expect(try Self.independent(reader) == ["4412", "4398", "1", "6"])
        // Without the map, the same feed is not one Galley reads.
        let unmapped = try Harness.galley(["sync", foreign, "--store", reader.path, "--json"])
        #expect(unmapped.status == 2 && (unmapped.json?["error"] as? [String: Any])?["id"] as? String == "feed.invalid", "\(unmapped.stdout)")
        #expect(try Harness.galley(["store", "check", "--store", reader.path, "-q"]).status == 0)
        try SyncCommandTests.expectSchemas(SyncCommandTests.eventLines(first.stdout) + [("sync", second.stdout), ("sync", mapped.stdout)])
    }
}
