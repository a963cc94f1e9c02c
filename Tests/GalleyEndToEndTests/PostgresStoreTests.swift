import Foundation
import GalleyTestSupport
import Testing

/// The PostgreSQL store as operators use it: the built binary with `--store postgres://…`
/// against the throwaway server of scripts/pg-test-server.sh (each test its own database and
/// blob folder). Every command, two `serve` instances on one store, imports of one issue racing
/// from two processes, S3 blobs, and `store copy`. (Imports killed at random moments, and two
/// versions imported at once, are StoreTests' cases, run on both backends.)
@Suite(.enabled(if: PostgresTestServer.enabled, "needs GALLEY_TEST_POSTGRES (make test starts a server)"))
struct PostgresStoreTests {
    static let newer = Harness.fixtures.appending(path: "zips/example-valid.zip").path
    static let older = Harness.fixtures.appending(path: "versions/example-valid.zip").path

    func packedExample() throws -> String {
        let out = try Harness.temporaryDirectory()
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", out.path + "/", "-q"]).status == 0)
        return out.appending(path: "com.example.harbour.2026-01.zip").path
    }

    func expectClean(_ store: String, issues: Int, environment: [String: String] = [:], _ comment: Comment? = nil) throws {
        let check = try Harness.galley(["store", "check", "--store", store, "--json"], environment: environment)
        #expect(check.status == 0, comment)
        #expect(check.json?["problems"] as? [String] == [], "\(check.stdout)")
        #expect(check.json?["issues"] as? Int == issues, "\(check.stdout)")
    }

    @Test func everyCommandWorksOnAPostgresStore() throws {
        let store = try PostgresTestServer.newStore()
        let example = try packedExample()
        // Queries never create a store.
        let missing = try Harness.galley(["issues", "--store", store, "--json"])
        #expect(missing.status == 2 && (missing.json?["error"] as? [String: Any])?["id"] as? String == "store.missing", "\(missing.stdout)")

        let imported = try Harness.galley(["import", example, Self.newer, "--store", store, "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(Harness.imports(imported).map { $0["status"] as? String } == ["imported", "imported"])
        // Two issues at once: the planner's statistics were brought up to date (-1: never).
        #expect(try PostgresTestServer.psqlValue(store: store, "SELECT reltuples FROM pg_class WHERE relname = 'article'") != "-1")
        let again = try Harness.galley(["import", example, "--store", store, "--json"])
        #expect(Harness.imports(again).first?["status"] as? String == "unchanged", "\(again.stdout)")

        let issues = try Harness.galley(["issues", "--store", store, "--json"])
        #expect((issues.json?["issues"] as? [[String: Any]])?.compactMap { $0["apple_id"] as? String }
                == ["com.example.harbour.2026-01", "example-valid"], "\(issues.stdout)")
        let articles = try Harness.galley(["articles", "--issue", "com.example.harbour.2026-01", "--featured", "--store", store, "--json"])
        #expect((articles.json?["articles"] as? [[String: Any]])?.count == 1, "\(articles.stdout)")
        let search = try Harness.galley(["search", "ferry captain", "--store", store, "--json"])
        #expect((search.json?["items"] as? [[String: Any]])?.first?["global_id"] as? String == "5f827f80262d6fe87d41ca17",
                "\(search.stdout)")
        let article = try Harness.galley(["article", "show", "5f827f80262d6fe87d41ca17", "--store", store, "--json"])
        #expect(article.status == 0, "\(article.stderr)")
        let assets = try Harness.galley(["assets", "--issue", "com.example.harbour.2026-01", "--store", store, "--json"])
        let paths = (assets.json?["assets"] as? [[String: Any]])?.compactMap { $0["path"] as? String } ?? []
        #expect(!paths.isEmpty && paths.allSatisfy { FileManager.default.fileExists(atPath: $0) }, "\(assets.stdout)")
        let rendered = try Harness.galley(["render", "--from-store", "--store", store, "--article", "5f827f80262d6fe87d41ca17", "--page"])
        #expect(rendered.status == 0 && rendered.stdout.contains("<html"), "\(rendered.stderr)")
        try expectClean(store, issues: 2)

        // A reader's store on PostgreSQL follows a feed (galley serve of a folder store).
        let served = try Harness.temporaryDirectory().appending(path: "served").path
        #expect(try Harness.galley(["import", example, "--store", served, "-q"]).status == 0)
        let server = try Harness.listening(["serve", "--store", served, "--port", "0", "--json"])
        defer { server.stop() }
        let reader = try PostgresTestServer.newStore()
        let synced = try Harness.galley(["sync", "http://127.0.0.1:\(server.port)/feed", "--store", reader, "--json"])
        #expect(synced.status == 0, "\(synced.stdout)\(synced.stderr)")
        let resynced = try Harness.galley(["sync", "http://127.0.0.1:\(server.port)/feed", "--store", reader, "--json"])
        #expect(resynced.status == 0 && resynced.stdout.contains("unchanged"), "\(resynced.stdout)")
        try expectClean(reader, issues: 1)

        #expect(try Harness.galley(["delete", "com.example.harbour.2026-01", "--store", store, "--yes", "-q"]).status == 0)
        let left = try Harness.galley(["issues", "--store", store, "--json"])
        #expect((left.json?["issues"] as? [[String: Any]])?.count == 1)
        let gc = try Harness.galley(["store", "gc", "--store", store, "--json"])
        #expect(gc.status == 0, "\(gc.stderr)")
        try expectClean(store, issues: 1)
    }

    /// Two instances on one store: an import through a third process is seen by both (their
    /// ETags change, their kept answers go) within a second, through LISTEN/NOTIFY.
    /// A store made before search text v2 (migration 4) has its articles' search text made
    /// again when next opened, so old issues' snippets lose their stray spaces too.
    @Test func anOlderStoresSearchTextIsMadeAgain() throws {
        let store = try PostgresTestServer.newStore()
        #expect(try Harness.galley(["import", try packedExample(), "--store", store, "-q"]).status == 0)
        let fresh = try PostgresTestServer.psqlValue(store: store, "SELECT string_agg(search_body, '|' ORDER BY id) FROM article")
        // As a Galley before version 4 left it: another text, and no record of the migration.
        _ = try PostgresTestServer.psqlValue(store: store, "UPDATE article SET search_body = search_body || ' stale'")
        _ = try PostgresTestServer.psqlValue(store: store, "DELETE FROM galley_migration WHERE version = 4")
        let searched = try Harness.galley(["search", "ferry", "--store", store, "--json"])
        #expect(searched.status == 0, "\(searched.stderr)")
        #expect(try PostgresTestServer.psqlValue(store: store, "SELECT string_agg(search_body, '|' ORDER BY id) FROM article") == fresh)
        #expect(try PostgresTestServer.psqlValue(store: store, "SELECT count(*) FROM galley_migration WHERE version = 4") == "1")
    }

    @Test func twoServeInstancesFollowAnImportWithinASecond() throws {
        let store = try PostgresTestServer.newStore()
        #expect(try Harness.galley(["import", Self.older, "--store", store, "-q"]).status == 0)
        let first = try Harness.listening(["serve", "--store", store, "--port", "0", "--json"])
        defer { first.stop() }
        let second = try Harness.listening(["serve", "--store", store, "--port", "0", "--json"])
        defer { second.stop() }
        let tag = """
            import sys, urllib.request
            for port in sys.argv[1:]:
                with urllib.request.urlopen("http://127.0.0.1:" + port + "/issues") as r:
                    print(r.headers["ETag"])
            """
        let before = try Harness.tool("python3", ["-c", tag, String(first.port), String(second.port)]).stdout
            .split(separator: "\n").map(String.init)
        // (Each instance's tags name its own Host, so they differ from each other.)
        #expect(before.count == 2 && before.allSatisfy { $0.hasPrefix("\"r") }, "\(before)")
        #expect(try Harness.galley(["import", Self.newer, "--store", store, "-q"]).status == 0)
        // Polls each instance until its tag moves: how long after the import returned.
        let poll = """
            import sys, time, urllib.request
            for port, old in zip(sys.argv[1::2], sys.argv[2::2]):
                start = time.monotonic()
                while True:
                    with urllib.request.urlopen("http://127.0.0.1:" + port + "/issues") as r:
                        tag, body = r.headers["ETag"], r.read()
                    if tag != old or time.monotonic() - start > 5:
                        break
                    time.sleep(0.01)
                print(tag != old and time.monotonic() - start < 1.0, b"2020-03-02" in body or b"2020-03-01" in body)
            """
        let after = try Harness.tool("python3", ["-c", poll, String(first.port), before[0], String(second.port), before[1]])
        #expect(after.stdout == "True True\nTrue True\n", "\(after.stdout)\(after.stderr)")
    }

    /// The same issue imported by two processes at once ends with exactly one version: the
    /// writer lock (an advisory lock) makes the second wait, then find the first's import.
    @Test func twoImportsOfTheSameIssueAtOnceEndWithOneVersion() throws {
        let store = try PostgresTestServer.newStore()
        // Create the store first, so both racers migrate nothing.
        #expect(try Harness.galley(["import", Self.older, "--store", store, "-q"]).status == 0)
        let results = Results()
        let group = DispatchGroup()
        for _ in 0..<2 {
            group.enter()
            Thread {
                defer { group.leave() }
                let result = try? Harness.galley(["import", Self.newer, "--store", store, "--json"])
                results.add(result.map { Harness.imports($0).first?["status"] as? String ?? "?\($0.stderr)" } ?? "did not run")
            }.start()
        }
        group.wait()
        #expect(results.all.sorted() == ["replaced", "unchanged"], "\(results.all)")
        let feed = try Harness.galley(["issue", "show", "example-valid", "--store", store, "--json"])
        #expect(feed.status == 0)
        try expectClean(store, issues: 1)
    }

    /// `store copy` from a SQLite folder to a PostgreSQL store and back: every issue, its feed
    /// version (never lower than the source's), the independent articles; each target checks
    /// clean, and the document keeps its schema.
    @Test func storeCopyMovesAStoreBetweenBackends() throws {
        let work = try Harness.temporaryDirectory()
        let folder = work.appending(path: "store").path
        let maps = Harness.root.appending(path: "Examples/key-maps")
        #expect(try Harness.galley(["import", Self.older, "--store", folder, "-q"]).status == 0)
        #expect(try Harness.galley(["import", Self.newer, "--store", folder, "-q"]).status == 0)  // feed version 2
        #expect(try Harness.galley(["import", try packedExample(), "--store", folder, "-q"]).status == 0)
        #expect(try Harness.galley(["import", "--articles", maps.appending(path: "wordpress-posts.sample.json").path, "--key-map",
                                    maps.appending(path: "wordpress-posts.yaml").path, "--store", folder, "-q"]).status == 0)
        let shared = try PostgresTestServer.newStore()
        let there = try Harness.galley(["store", "copy", "--from", folder, "--to", shared, "--json"])
        #expect(there.status == 0, "\(there.stderr)")
        let copied = (there.json?["issues"] as? [[String: Any]] ?? []).map { "\($0["apple_id"] ?? "")=\($0["version"] ?? "")" }
        #expect(Set(copied) == ["example-valid=2", "com.example.harbour.2026-01=1"], "\(there.stdout)")
        #expect((there.json?["check"] as? [String: Any])?["problems"] as? [String] == [])
        let file = work.appending(path: "copy.json")
        try there.stdout.write(to: file, atomically: true, encoding: .utf8)
        let schema = try Harness.tool("python3", [Harness.root.appending(path: "Tests/Support/check_json_schema.py").path,
                                                  Harness.root.appending(path: "docs/json").path, "store-copy=\(file.path)"])
        #expect(schema.status == 0, "\(schema.stdout)\(schema.stderr)")

        let back = work.appending(path: "back").path
        #expect(try Harness.galley(["store", "copy", "--from", shared, "--to", back, "-q"]).status == 0)
        for store in [shared, back] {
            let feed = try Harness.galley(["issue", "show", "example-valid", "--store", store, "--json"])
            #expect(feed.status == 0)
            let independent = try Harness.galley(["articles", "--independent", "--store", store, "--json"])
            let original = try Harness.galley(["articles", "--independent", "--store", folder, "--json"])
            #expect((independent.json?["articles"] as? [[String: Any]])?.count == (original.json?["articles"] as? [[String: Any]])?.count)
            try expectClean(store, issues: 2)
        }
        let same = try Harness.galley(["store", "copy", "--from", folder, "--to", folder])
        #expect(same.status == 2, "the same store on both sides is a usage error")
    }

    /// Blobs on S3 (SeaweedFS, which checks signatures): the binary imports into it, `serve` streams a file and the kept zip
    /// from it (fetched once into the instance's cache, bytes and ETag the SHA-256), and a forced
    /// re-import finds every blob already there.
    @Test func blobsOnS3AreImportedServedAndChecked() throws {
        let environment = try PostgresTestServer.s3Environment()
        let bucket = PostgresTestServer.uniqueName("galley-e2e")
        let made = try Harness.run(URL(fileURLWithPath: "/usr/bin/env"), [
            "python3", Harness.root.appending(path: "Tests/Support/s3_request.py").path, "PUT", try #require(PostgresTestServer.s3) + "/" + bucket,
        ], environment: environment)
        #expect(made.stdout.hasPrefix("200\n"), "\(made.stdout)\(made.stderr)")
        let store = try PostgresTestServer.newStore(blobs: "s3://\(bucket)/galley")
        let example = try packedExample()
        let imported = try Harness.galley(["import", example, "--store", store, "--json"], environment: environment)
        #expect(imported.status == 0, "\(imported.stderr)")
        let again = try Harness.galley(["import", example, "--store", store, "--force", "--json"], environment: environment)
        #expect(Harness.imports(again).first?["status"] as? String == "replaced", "\(again.stderr)")
        let assets = try Harness.galley(["assets", "--issue", "com.example.harbour.2026-01", "--store", store, "--json"], environment: environment)
        let paths = (assets.json?["assets"] as? [[String: Any]])?.compactMap { $0["path"] as? String } ?? []
        #expect(!paths.isEmpty && paths.allSatisfy { $0.hasPrefix("s3://\(bucket)/galley/") }, "\(paths)")
        try expectClean(store, issues: 1, environment: environment)

        let server = try Harness.listening(["serve", "--store", store, "--port", "0", "--json"], environment: environment)
        defer { server.stop() }
        let fetch = """
            import hashlib, json, sys, urllib.request
            base = "http://127.0.0.1:" + sys.argv[1]
            for path in ("/issues/com.example.harbour.2026-01/files/cover.jpg", "/issues/com.example.harbour.2026-01/files/cover.jpg"):
                with urllib.request.urlopen(base + path) as r:
                    print(r.status, r.headers["ETag"].strip('"') == hashlib.sha256(r.read()).hexdigest())
            with urllib.request.urlopen(base + "/feed") as r:
                package = json.load(r)["packages"][0]
            with urllib.request.urlopen(package["file_path"].replace("http://127.0.0.1:" + sys.argv[1], base)) as r:
                print(r.status, hashlib.sha256(r.read()).hexdigest() == package["sha256"])
            """
        let answers = try Harness.tool("python3", ["-c", fetch, String(server.port)])
        #expect(answers.stdout == "200 True\n200 True\n200 True\n", "\(answers.stdout)\(answers.stderr)")
    }

    /// The connection lost after the server committed an import and before its answer came
    /// (Tests/Support/pg_commit_cut.py drops that answer, as a network or a load balancer may):
    /// the import ends in words, not knowing; the store is what the database has, whole. (The
    /// blobs it placed were taken back on any failed COMMIT, which left the committed version
    /// without its files.) Whichever way it went, the next open sweeps what no row names.
    @Test func anImportWhoseCommitAnswerIsLostLeavesWhatTheDatabaseHasWhole() throws {
        let store = try PostgresTestServer.newStore()
        #expect(try Harness.galley(["import", Self.older, "--store", store, "-q"]).status == 0)
        guard var parts = URLComponents(string: store), let port = parts.port else { throw GalleyTestError("no port in \(store)") }
        let log = try Harness.temporaryDirectory().appending(path: "cuts.log")
        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        proxy.arguments = ["python3", Harness.root.appending(path: "Tests/Support/pg_commit_cut.py").path, String(port),
                           "INSERT INTO package_version", log.path]
        let output = Pipe()
        proxy.standardOutput = output
        try proxy.run()
        // SIGKILL: a child started here inherits a signal mask that blocks SIGTERM.
        defer { kill(proxy.processIdentifier, SIGKILL); proxy.waitUntilExit() }
        parts.port = try #require(Int(Harness.readLines(output.fileHandleForReading, 1).trimmingCharacters(in: .whitespacesAndNewlines)))
        let cutStore = try #require(parts.string)

        let cut = try Harness.galley(["import", Self.newer, "--store", cutStore])
        #expect((try? String(contentsOf: log, encoding: .utf8)) == "cut\n", "the proxy never saw the import's COMMIT answered")
        #expect(cut.status == 2 && cut.stderr.contains("PostgreSQL"), "\(cut.stdout)\(cut.stderr)")
        try expectClean(store, issues: 1, "the committed version's files are all there")
        let shown = try Harness.galley(["issue", "show", "example-valid", "--store", store])
        #expect(shown.stdout.contains("updated 2020-03-01"), "the new version is what the database has: \(shown.stdout)")
    }

    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [String] = []
        func add(_ value: String) { lock.lock(); values.append(value); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return values }
    }
}
