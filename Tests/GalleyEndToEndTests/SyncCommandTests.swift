import Foundation
import Testing

/// `galley sync` against real servers on loopback: Galley's own `serve`, and a scripted server
/// (Tests/Support/fault_server.py) for the faults `serve` never makes. Every case ends with the
/// store whole and `store check` clean.
@Suite struct SyncCommandTests {
    static func storeIsClean(_ store: URL) throws -> Bool {
        try Harness.galley(["store", "check", "--store", store.path, "-q"]).status == 0
    }

    static func issues(_ store: URL) throws -> [String] {
        let listed = try Harness.galley(["issues", "--store", store.path, "--json"])
        return (listed.json?["issues"] as? [[String: Any]] ?? []).compactMap { $0["apple_id"] as? String }.sorted()
    }

    /// Checks documents against their schemas in docs/json (one run of check_json_schema.py):
    /// `sync` for --json, `sync-event` for each line of --events json.
    static func expectSchemas(_ documents: [(schema: String, text: String)]) throws {
        let folder = try Harness.temporaryDirectory()
        var pairs: [String] = []
        for (index, document) in documents.enumerated() {
            let file = folder.appending(path: "\(index).json")
            try Data(document.text.utf8).write(to: file)
            pairs.append("\(document.schema)=\(file.path)")
        }
        let check = try Harness.tool("python3", [JSONContractTests.checker.path, JSONContractTests.schemas.path] + pairs)
        #expect(check.status == 0, "outputs that break their schema:\n\(check.stdout)\(check.stderr)")
    }

    static func eventLines(_ text: String) -> [(schema: String, text: String)] {
        text.split(separator: "\n").map { ("sync-event", String($0)) }
    }

    static func events(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func itFollowsAServedFeedAndAnUnchangedFeedWritesNothing() throws {
        let work = try Harness.temporaryDirectory()
        let source = work.appending(path: "source")
        let reader = work.appending(path: "reader")
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", work.path + "/", "-q"]).status == 0)
        for zip in [work.appending(path: "com.example.harbour.2026-01.zip").path, Harness.fixtures.appending(path: "zips/example-valid.zip").path] {
            #expect(try Harness.galley(["import", zip, "--store", source.path, "-q"]).status == 0)
        }
        let server = try Harness.listening(["serve", "--store", source.path, "--port", "0", "--json"])
        defer { server.stop() }
        let feed = "http://127.0.0.1:\(server.port)/feed"

        let first = try Harness.galley(["sync", feed, "--store", reader.path, "--events", "json"])
        #expect(first.status == 0, "\(first.stderr)")
        let names = Self.events(first.stdout).map { $0["event"] as? String ?? "" }
        #expect(names == ["feedChanged", "downloadStarted", "issueDownloadComplete", "downloadStarted", "issueDownloadComplete", "downloadComplete"])
        #expect(try Self.issues(reader) == ["com.example.harbour.2026-01", "example-valid"])
        #expect(try Self.storeIsClean(reader))
        // The downloads folder is empty again: every package was imported and its file removed.
        #expect(try FileManager.default.contentsOfDirectory(atPath: reader.appending(path: "downloads").path) == [".lock"])
        let database = try Data(contentsOf: reader.appending(path: "store.sqlite"))

        // Unchanged: one conditional request, answered 304, nothing written.
        let second = try Harness.galley(["sync", feed, "--store", reader.path, "--json"])
        #expect(second.status == 0)
        #expect(second.json?["unchanged"] as? Bool == true)
        #expect(try Data(contentsOf: reader.appending(path: "store.sqlite")) == database)

        // An issue gone from the feed is reported and kept.
        #expect(try Harness.galley(["delete", "example-valid", "--store", source.path, "--yes", "-q"]).status == 0)
        let third = try Harness.galley(["sync", feed, "--store", reader.path, "--json"])
        #expect(third.status == 0)
        #expect(third.json?["not_in_feed"] as? [String] == ["example-valid"])
        #expect((third.json?["current"] as? [String]) == ["com.example.harbour.2026-01"], "not downloaded again")
        #expect(try Self.issues(reader) == ["com.example.harbour.2026-01", "example-valid"])
        #expect(third.json?["removed"] as? [String] == [])

        // --prune removes it (the feed is read whole: the last sync's ETag would get a 304).
        let pruned = try Harness.galley(["sync", feed, "--store", reader.path, "--prune", "--events", "json"])
        #expect(pruned.status == 0, "\(pruned.stdout)\(pruned.stderr)")
        let pruneEvents = Self.events(pruned.stdout).map { "\($0["event"] ?? "")" + (($0["apple_id"] as? String).map { " " + $0 } ?? "") }
        #expect(pruneEvents == ["feedChanged", "issueNotInFeed example-valid", "issueRemoved example-valid", "downloadComplete"])
        #expect(try Self.issues(reader) == ["com.example.harbour.2026-01"])
        #expect(try Self.storeIsClean(reader))
        try Self.expectSchemas(Self.eventLines(first.stdout) + Self.eventLines(pruned.stdout)
                               + [("sync", second.stdout), ("sync", third.stdout)])
    }

    /// A bad address is a usage error that creates no store.
    @Test func anAddressThatIsNotHTTPIsAUsageError() throws {
        let store = try Harness.temporaryDirectory().appending(path: "reader")
        for url in ["ftp://example.com/feed", "feed.json", "http://"] {
            let result = try Harness.galley(["sync", url, "--store", store.path, "--json"])
            #expect(result.status == 2)
            #expect((result.json?["error"] as? [String: Any])?["id"] as? String == "usage", "\(url): \(result.stdout)")
            #expect(!FileManager.default.fileExists(atPath: store.path))
        }
    }

    /// Starts the scripted server for `scenario`, serving the example-valid fixture.
    /// `zip`: a fixture's path under Tests/Fixtures, or an absolute path.
    static func faultServer(_ scenario: String, log: URL, zip: String = "zips/example-valid.zip", appleID: String = "example-valid")
        throws -> (Process, Int)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Harness.root.appending(path: "Tests/Support/fault_server.py").path, scenario,
                             zip.hasPrefix("/") ? zip : Harness.fixtures.appending(path: zip).path, appleID, log.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = Harness.readLines(output.fileHandleForReading, 1)
        let port = try #require(Int(line.trimmingCharacters(in: .whitespacesAndNewlines)), "fault_server.py said: \(line)")
        return (process, port)
    }

    @Test func aCutDownloadResumesFromWhereItStopped() throws {
        let work = try Harness.temporaryDirectory()
        let log = work.appending(path: "requests.log")
        let (server, port) = try Self.faultServer("cut", log: log)
        defer { server.terminate() }
        let result = try Harness.galley(["sync", "http://127.0.0.1:\(port)/feed", "--store", work.appending(path: "reader").path, "--events", "json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(Self.events(result.stdout).contains { $0["event"] as? String == "retrying" })
        let size = try #require(try FileManager.default.attributesOfItem(atPath: Harness.fixtures.appending(path: "zips/example-valid.zip").path)[.size] as? Int)
        let requests = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").filter { $0.contains("/p.zip") }
        #expect(requests.count == 2)
        #expect(requests.last?.contains("range=bytes=\(size / 2)-") == true, "resumed at the cut, \(requests)")
        #expect(requests.last?.contains("if-range=\"") == true)
        #expect(try Self.issues(work.appending(path: "reader")) == ["example-valid"])
        #expect(try Self.storeIsClean(work.appending(path: "reader")))
    }

    /// A package named by a 300-byte file (a Drupal packager's single package, no SHA-256 to
    /// name its download by) is downloaded under a name cut to what a file system takes.
    @Test func aPackageWithAVeryLongFileNameIsStillDownloaded() throws {
        let work = try Harness.temporaryDirectory()
        let (server, port) = try Self.faultServer("longname", log: work.appending(path: "requests.log"))
        defer { server.terminate() }
        let reader = work.appending(path: "reader")
        let result = try Harness.galley(["sync", "http://127.0.0.1:\(port)/feed", "--store", reader.path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(try Self.issues(reader) == ["example-valid"])
        #expect(try Self.storeIsClean(reader))
    }

    /// Faults that must leave the store as it was, with the exit status and error id each gets.
    @Test(arguments: [
        ("badsha", Int32(1), "download.mismatch"),
        ("down", Int32(2), "feed.unreachable"),
        ("garbage", Int32(2), "feed.invalid"),
        ("truncated", Int32(1), "feed.unreachable"),
        ("stall", Int32(1), "feed.unreachable"),
    ])
    func faultsLeaveTheStoreAsItWas(scenario: String, status: Int32, id: String) throws {
        let work = try Harness.temporaryDirectory()
        let reader = work.appending(path: "reader")
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "versions/example-valid.zip").path, "--store", reader.path, "-q"]).status == 0)
        let before = try Harness.galley(["issue", "show", "example-valid", "--store", reader.path, "--json"]).stdout
        let (server, port) = try Self.faultServer(scenario, log: work.appending(path: "requests.log"))
        defer { server.terminate() }
        let started = Date()
        let result = try Harness.galley(["sync", "http://127.0.0.1:\(port)/feed", "--store", reader.path, "--retries", "1", "--timeout", "1", "--json"])
        #expect(Date().timeIntervalSince(started) < 15, "a stalled server is given up on after --timeout")
        #expect(result.status == status, "\(result.stdout)\(result.stderr)")
        let error = (result.json?["error"] as? [String: Any]) ?? ((result.json?["failures"] as? [[String: Any]])?.first?["error"] as? [String: Any])
        #expect(error?["id"] as? String == id, "\(result.stdout)")
        #expect(try Harness.galley(["issue", "show", "example-valid", "--store", reader.path, "--json"]).stdout == before)
        #expect(try Self.storeIsClean(reader))
        // The same fault under --events json: the last line says how the sync ended.
        let events = try Harness.galley(["sync", "http://127.0.0.1:\(port)/feed", "--store", reader.path, "--retries", "0", "--timeout", "1", "--events", "json"])
        let last = Self.events(events.stdout).last
        #expect(last?["event"] as? String == (status == 2 ? "syncFailed" : "downloadComplete"), "\(events.stdout)")
        try Self.expectSchemas([("sync", result.stdout)] + Self.eventLines(events.stdout))
    }

    /// A first sync whose feed cannot be fetched, or is not a feed, makes no store: neither a
    /// folder where there was none nor a database in an empty folder given as the store. One
    /// whose feed answers makes it, and the failed ones left nothing in the way.
    @Test(arguments: [("down", "feed.unreachable"), ("garbage", "feed.invalid")])
    func aFirstSyncThatFailsAtTheFeedMakesNoStore(scenario: String, id: String) throws {
        let work = try Harness.temporaryDirectory()
        let (server, port) = try Self.faultServer(scenario, log: work.appending(path: "requests.log"))
        defer { server.terminate() }
        let absent = work.appending(path: "reader")
        let empty = work.appending(path: "made-by-hand")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false)
        for store in [absent, empty] {
            let result = try Harness.galley(["sync", "http://127.0.0.1:\(port)/feed", "--store", store.path, "--retries", "0", "--json"])
            #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
            #expect((result.json?["error"] as? [String: Any])?["id"] as? String == id, "\(result.stdout)")
        }
        #expect(!FileManager.default.fileExists(atPath: absent.path), "a failed first sync made a store folder")
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty.path).isEmpty, "a failed first sync wrote into the folder given")

        let (good, goodPort) = try Self.faultServer("ok", log: work.appending(path: "good.log"))
        defer { good.terminate() }
        for store in [absent, empty] {
            let result = try Harness.galley(["sync", "http://127.0.0.1:\(goodPort)/feed", "--store", store.path])
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            #expect(try Self.issues(store) == ["example-valid"])
            #expect(try Self.storeIsClean(store))
        }
    }

    @Test func aServerThatAsksToWaitIsWaitedFor() throws {
        let work = try Harness.temporaryDirectory()
        let (server, port) = try Self.faultServer("busy", log: work.appending(path: "requests.log"))
        defer { server.terminate() }
        let result = try Harness.galley(["sync", "http://127.0.0.1:\(port)/feed", "--store", work.appending(path: "reader").path, "--events", "json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let retry = Self.events(result.stdout).first { $0["event"] as? String == "retrying" }
        #expect(retry?["seconds"] as? Double == 1, "Retry-After: 1 honoured")
    }

    /// An unsigned feed whose revision went back (one wrong answer far ahead, a restored
    /// server) is followed with a warning: its revision proves nothing, and refusing it would
    /// stop every later sync of that store.
    @Test func anUnsignedFeedThatWentBackIsFollowedWithAWarning() throws {
        let work = try Harness.temporaryDirectory()
        let reader = work.appending(path: "reader")
        let (server, port) = try Self.faultServer("rollback", log: work.appending(path: "requests.log"))
        defer { server.terminate() }
        let url = "http://127.0.0.1:\(port)/feed"
        #expect(try Harness.galley(["sync", url, "--store", reader.path, "-q"]).status == 0)
        // The same address now answers revision 1 after 50.
        let result = try Harness.galley(["sync", url, "--store", reader.path, "--events", "json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let events = Self.events(result.stdout)
        let wentBack = events.first { $0["event"] as? String == "feedWentBack" }
        #expect(wentBack?["revision"] as? Int == 1, "\(result.stdout)")
        #expect((wentBack?["error"] as? [String: Any])?["id"] as? String == "feed.rollback")
        #expect(events.last?["event"] as? String == "downloadComplete")
        try Self.expectSchemas(Self.eventLines(result.stdout))
        // Without --events the warning is on standard error, in words.
        let plain = try Harness.galley(["sync", url, "--store", reader.path, "--no-delta"])
        #expect(plain.status == 0, "\(plain.stdout)\(plain.stderr)")
        // Revision 1 is now the one followed: the next answer (1 again) is no step back.
        #expect(!plain.stderr.contains("lower than"), "\(plain.stderr)")
        #expect(try Self.issues(reader) == ["example-valid"])
        #expect(try Self.storeIsClean(reader))
    }

    /// A signed feed whose revision went back is refused (`feed.rollback`, exit 2) and the store
    /// left as it was: the revision is proven, so a lower one is a replay or a restored
    /// server. `--reset-revision` follows it from there. Both servers are galley serve with
    /// one key, the second on the first one's port with a store at a lower revision.
    @Test func aSignedFeedThatWentBackIsRefusedUntilReset() throws {
        let work = try Harness.temporaryDirectory()
        let keys = work.appending(path: "keys")
        #expect(try Harness.galley(["keys", "generate", "-o", keys.path, "-q"]).status == 0)
        let trust = keys.appending(path: "feed.pub").path
        let ahead = work.appending(path: "ahead")
        let behind = work.appending(path: "behind")
        for zip in ["versions/example-valid.zip", "zips/example-valid.zip"] {
            #expect(try Harness.galley(["import", Harness.fixtures.appending(path: zip).path, "--store", ahead.path, "-q"]).status == 0)
        }
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", behind.path, "-q"]).status == 0)
        let signing = ["--signing-key", keys.appending(path: "feed.key").path]
        let first = try Harness.listening(["serve", "--store", ahead.path, "--port", "0", "--json"] + signing)
        let port = first.port
        let url = "http://127.0.0.1:\(port)/feed"
        let reader = work.appending(path: "reader")
        let synced = try Harness.galley(["sync", url, "--store", reader.path, "--trust-key", trust, "--json"])
        first.stop()
        #expect(synced.status == 0, "\(synced.stdout)\(synced.stderr)")
        let followed = try #require(synced.json?["revision"] as? Int)
        let second = try Harness.listening(["serve", "--store", behind.path, "--port", "\(port)", "--json"] + signing)
        defer { second.stop() }
        let before = try Harness.snapshot(reader.path)
        let result = try Harness.galley(["sync", url, "--store", reader.path, "--trust-key", trust, "--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let error = result.json?["error"] as? [String: Any]
        #expect(error?["id"] as? String == "feed.rollback")
        #expect((error?["message"] as? String)?.contains("lower than \(followed)") == true, "\(result.stdout)")
        let hint = error?["hint"] as? String ?? ""
        #expect(hint.contains("--reset-revision"), "the way out is named: \(hint)")
        #expect(try Harness.snapshot(reader.path) == before, "the store is as it was")
        // The way out: the store follows the feed from its revision now, and keeps doing so.
        let reset = try Harness.galley(["sync", url, "--store", reader.path, "--trust-key", trust, "--reset-revision", "--json"])
        #expect(reset.status == 0, "\(reset.stdout)\(reset.stderr)")
        let lower = try #require(reset.json?["revision"] as? Int)
        #expect(lower < followed, "\(reset.stdout)")
        let after = try Harness.galley(["sync", url, "--store", reader.path, "--trust-key", trust, "--json"])
        #expect(after.status == 0, "\(after.stdout)\(after.stderr)")
        #expect(try Self.storeIsClean(reader))
    }

    /// A publisher who restores an older version of an issue on the server (`import --force`
    /// after a bad release) is followed: the feed names the older package, under a new
    /// revision, and every reader goes back to it instead of refusing it on every sync.
    @Test func aRestoredOlderVersionIsFollowed() throws {
        let work = try Harness.temporaryDirectory()
        let source = work.appending(path: "source")
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", source.path, "-q"]).status == 0)
        let server = try Harness.listening(["serve", "--store", source.path, "--port", "0", "--json"])
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/feed"
        let reader = work.appending(path: "reader")
        #expect(try Harness.galley(["sync", url, "--store", reader.path, "-q"]).status == 0)
        let newer = try Harness.galley(["issue", "show", "example-valid", "--store", reader.path, "--json"])
        // The publisher goes back to the older release.
        let older = Harness.fixtures.appending(path: "versions/example-valid.zip").path
        #expect(try Harness.galley(["import", older, "--store", source.path, "-q"]).status == 1, "refused without --force")
        #expect(try Harness.galley(["import", older, "--store", source.path, "--force", "-q"]).status == 0)
        let result = try Harness.galley(["sync", url, "--store", reader.path, "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let imported = result.json?["imported"] as? [[String: Any]] ?? []
        #expect(imported.first?["status"] as? String == "replaced", "\(result.stdout)")
        let shown = try Harness.galley(["issue", "show", "example-valid", "--store", reader.path, "--json"])
        let served = try Harness.galley(["issue", "show", "example-valid", "--store", source.path, "--json"])
        func lastUpdated(_ result: Harness.Result) -> String? { (result.json?["issue"] as? [String: Any])?["last_updated"] as? String }
        #expect(lastUpdated(shown) != nil && lastUpdated(shown) == lastUpdated(served), "\(shown.stdout)")
        #expect(lastUpdated(shown) != lastUpdated(newer))
        // And it stays there: the next sync has nothing to do.
        let again = try Harness.galley(["sync", url, "--store", reader.path, "--json"])
        #expect(again.status == 0 && again.json?["unchanged"] as? Bool == true, "\(again.stdout)\(again.stderr)")
        #expect(try Self.storeIsClean(reader))
    }

    /// A store holding the older example-valid, and what `issue show` says of it then.
    static func readerWithOldContent(_ work: URL) throws -> (URL, String) {
        let reader = work.appending(path: "reader")
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "versions/example-valid.zip").path, "--store", reader.path, "-q"]).status == 0)
        return (reader, try Harness.galley(["issue", "show", "example-valid", "--store", reader.path, "--json"]).stdout)
    }

    static func downloads(_ log: URL) throws -> Int {
        try String(contentsOf: log, encoding: .utf8).split(separator: "\n").filter { $0.contains("/p.zip") }.count
    }

    /// A package the import gate refuses is downloaded once: later syncs report it from the
    /// store's record until the feed names another SHA-256.
    @Test func aRefusedPackageIsNotDownloadedAgain() throws {
        let work = try Harness.temporaryDirectory()
        let (reader, before) = try Self.readerWithOldContent(work)
        let log = work.appending(path: "requests.log")
        let (server, port) = try Self.faultServer("ok", log: log, zip: "zips/missing-title-error.zip")
        defer { server.terminate() }
        for run in 1...2 {
            // Whole downloads, counted one per request (a delta would make several ranged ones).
            let result = try Harness.galley(["sync", "http://127.0.0.1:\(port)/feed", "--store", reader.path, "--no-delta", "--json"])
            #expect(result.status == 1, "run \(run): \(result.stdout)\(result.stderr)")
            let error = (result.json?["failures"] as? [[String: Any]])?.first?["error"] as? [String: Any]
            #expect(error?["id"] as? String == "input.problems", "run \(run): \(result.stdout)")
            if run == 2 { #expect((error?["message"] as? String)?.contains("not downloaded again") == true, "\(result.stdout)") }
            try Self.expectSchemas([("sync", result.stdout)])
        }
        #expect(try Self.downloads(log) == 1)
        #expect(try Harness.galley(["issue", "show", "example-valid", "--store", reader.path, "--json"]).stdout == before)
        #expect(try Self.storeIsClean(reader))
    }

    /// A full disk (here a file-size limit, `ulimit -f`, under which SQLite still works) fails
    /// the download, keeps the store as it was, and the next sync resumes from the bytes written.
    @Test func aFullDiskKeepsTheOldContentAndTheNextSyncResumes() throws {
        let work = try Harness.temporaryDirectory()
        let (reader, _) = try Self.readerWithOldContent(work)
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", work.path + "/", "-q"]).status == 0)
        let log = work.appending(path: "requests.log")
        let (server, port) = try Self.faultServer("ok", log: log, zip: work.appending(path: "com.example.harbour.2026-01.zip").path,
                                                  appleID: "com.example.harbour.2026-01")
        defer { server.terminate() }
        let url = "http://127.0.0.1:\(port)/feed"
        // 256 KiB: the example's package (about 590 KB) cannot be written whole; the store file (140 KB) can.
        let limited = try Harness.galley(["sync", url, "--store", reader.path, "--retries", "0", "--json"], fileSizeLimit: 256)
        #expect(limited.status == 1, "\(limited.stdout)\(limited.stderr)")
        let error = (limited.json?["failures"] as? [[String: Any]])?.first?["error"] as? [String: Any]
        #expect(error?["id"] as? String == "store.failed", "\(limited.stdout)")
        #expect((error?["message"] as? String)?.contains("File too large") == true, "\(limited.stdout)")
        #expect(try Self.issues(reader) == ["example-valid"])
        #expect(try Self.storeIsClean(reader))
        let resumed = try Harness.galley(["sync", url, "--store", reader.path, "--json"])
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        let requests = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").filter { $0.contains("/p.zip") }
        #expect(requests.last?.contains("range=bytes=\(256 * 1024)-") == true, "resumed after the 256 KiB written: \(requests)")
        #expect(try Self.issues(reader) == ["com.example.harbour.2026-01", "example-valid"])
        #expect(try Self.storeIsClean(reader))
    }

    /// A reader store synced once from a feed server answering "ok" (the caller stops the
    /// server): the store, the feed's address and the server.
    static func readerSyncedOnce() throws -> (reader: URL, url: String, server: Process) {
        let work = try Harness.temporaryDirectory()
        let (reader, _) = try readerWithOldContent(work)
        let (server, port) = try faultServer("ok", log: work.appending(path: "requests.log"))
        let url = "http://127.0.0.1:\(port)/feed"
        let first = try Harness.galley(["sync", url, "--store", reader.path, "-q"])
        if first.status != 0 { server.terminate() }
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        return (reader, url, server)
    }

    /// A sync killed after its import committed, before it removed the downloaded zip, left
    /// the zip for ever (the package was current from then on, so no later sync touched it):
    /// the next sync removes such zips, and keeps `.partial` files, which it resumes.
    @Test func aDownloadLeftWholeByAKilledSyncIsRemovedByTheNext() throws {
        let (reader, url, server) = try Self.readerSyncedOnce()
        defer { server.terminate() }
        let downloads = reader.appending(path: "downloads")
        let left = downloads.appending(path: "63fd858c3e68bcaefe6376340c63a36058c7c1e7dd2eaccd7fbaca4ba9cf716b.zip")
        let partial = downloads.appending(path: "v7-other.zip.partial")
        try FileManager.default.copyItem(at: Harness.fixtures.appending(path: "zips/example-valid.zip"), to: left)
        try Data("half".utf8).write(to: partial)
        let again = try Harness.galley(["sync", url, "--store", reader.path, "--json"])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect((again.json?["current"] as? [String]) == ["example-valid"], "\(again.stdout)")
        #expect(try Set(FileManager.default.contentsOfDirectory(atPath: downloads.path)) == [".lock", "v7-other.zip.partial"])
        #expect(try Self.storeIsClean(reader))
    }

    /// A `.partial` download no package of the feed names, untouched for over a day (its
    /// package dropped or replaced while the download was cut), is removed by the next sync
    /// that reads the feed; one the feed names, or one written lately (another feed this store
    /// follows may be resuming it), stays, and so does anything that is not a download.
    @Test func anAbandonedPartialDownloadIsRemovedAfterADay() throws {
        let (reader, url, server) = try Self.readerSyncedOnce()
        defer { server.terminate() }
        let downloads = reader.appending(path: "downloads")
        let twoDaysAgo = Date(timeIntervalSinceNow: -2 * 86_400)
        let names = [
            "abandoned": String(repeating: "0", count: 64) + ".zip.partial",
            "named": "63fd858c3e68bcaefe6376340c63a36058c7c1e7dd2eaccd7fbaca4ba9cf716b.zip.partial",
            "recent": "v7-other.zip.partial",
            "other": "notes.txt",
        ]
        for (kind, name) in names {
            let path = downloads.appending(path: name).path
            try Data("half".utf8).write(to: URL(fileURLWithPath: path))
            if kind != "recent" { try FileManager.default.setAttributes([.modificationDate: twoDaysAgo], ofItemAtPath: path) }
        }
        let again = try Harness.galley(["sync", url, "--store", reader.path, "--prune", "--json"])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(try Set(FileManager.default.contentsOfDirectory(atPath: downloads.path))
                == [".lock", names["named"]!, names["recent"]!, names["other"]!])
    }

    /// SIGKILL at moments spread over a sync (feed, download, import): after each, the store
    /// holds the old issue or the new one, whole, and `store check` is clean; a last sync
    /// completes. The delays are fixed and span the whole sync every run (drawn at random, a
    /// run could miss a phase, and a failure could not be asked for again).
    @Test func aSyncKilledAtPointsAcrossItLeavesTheStoreWhole() throws {
        let work = try Harness.temporaryDirectory()
        let (reader, before) = try Self.readerWithOldContent(work)
        let newer = work.appending(path: "newer")
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", newer.path, "-q"]).status == 0)
        let after = try Harness.galley(["issue", "show", "example-valid", "--store", newer.path, "--json"]).stdout
        let (server, port) = try Self.faultServer("slow", log: work.appending(path: "requests.log"))
        defer { server.terminate() }
        let url = "http://127.0.0.1:\(port)/feed"
        var delays: [Int] = []
        for delay in [0, 60, 150, 280, 450, 700] {
            delays.append(delay)
            let process = Process()
            process.executableURL = Harness.galley
            process.arguments = ["sync", url, "--store", reader.path, "-q"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(useconds_t(delay * 1000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let shown = try Harness.galley(["issue", "show", "example-valid", "--store", reader.path, "--json"]).stdout
            #expect(shown == before || shown == after, "killed after \(delays) ms")
            #expect(try Self.storeIsClean(reader), "killed after \(delays) ms")
        }
        let last = try Harness.galley(["sync", url, "--store", reader.path, "--json"])
        #expect(last.status == 0, "after kills at \(delays) ms: \(last.stdout)\(last.stderr)")
        #expect(try Harness.galley(["issue", "show", "example-valid", "--store", reader.path, "--json"]).stdout == after)
        #expect(try Self.storeIsClean(reader))
        let left = try FileManager.default.contentsOfDirectory(atPath: reader.appending(path: "downloads").path).filter { $0 != ".lock" }
        #expect(left.isEmpty, "\(left)")
    }

    /// Two syncs into one store at once: the second stops at once (`sync.running`), changing nothing.
    @Test func aSecondSyncIntoTheSameStoreStopsAtOnce() throws {
        let work = try Harness.temporaryDirectory()
        let (reader, _) = try Self.readerWithOldContent(work)
        let (server, port) = try Self.faultServer("stall", log: work.appending(path: "requests.log"))
        defer { server.terminate() }
        let url = "http://127.0.0.1:\(port)/feed"
        let first = Process()
        first.executableURL = Harness.galley
        first.arguments = ["sync", url, "--store", reader.path, "--timeout", "5", "--retries", "0", "--no-delta", "-q"]
        first.standardOutput = FileHandle.nullDevice
        first.standardError = FileHandle.nullDevice
        try first.run()
        defer { kill(first.processIdentifier, SIGKILL); first.waitUntilExit() }
        // Wait until the first one is downloading (the server logged its request).
        let log = work.appending(path: "requests.log")
        let deadline = Date().addingTimeInterval(10)
        while ((try? Self.downloads(log)) ?? 0) == 0, Date() < deadline { usleep(10_000) }
        let second = try Harness.galley(["sync", url, "--store", reader.path, "--json"])
        #expect(second.status == 2, "\(second.stdout)\(second.stderr)")
        #expect((second.json?["error"] as? [String: Any])?["id"] as? String == "sync.running", "\(second.stdout)")
        #expect(try Self.downloads(log) == 1, "the second sync fetched nothing")
    }

    /// A change of trust reads the feed again instead of taking the server's 304 for it: a
    /// store that followed a feed without `--trust-key` is refused once a key is given and the
    /// feed is not signed by it, and followed (naming the key) when it is; another key later is
    /// refused too; the same key again is a 304 that still names it.
    @Test func aChangeOfTrustReadsTheFeedAgain() throws {
        let work = try Harness.temporaryDirectory()
        let keys = work.appending(path: "keys")
        let generated = try Harness.galley(["keys", "generate", "-o", keys.path, "--json"])
        #expect(try Harness.galley(["keys", "generate", "-o", keys.path, "--name", "other", "-q"]).status == 0)
        let keyID = try #require(generated.json?["key_id"] as? String)
        let source = work.appending(path: "source")
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", source.path, "-q"]).status == 0)
        let signed = try Harness.listening(["serve", "--store", source.path, "--port", "0", "--json",
                                            "--signing-key", keys.appending(path: "feed.key").path])
        defer { signed.stop() }
        let unsigned = try Harness.listening(["serve", "--store", source.path, "--port", "0", "--json"])
        defer { unsigned.stop() }
        let trust = keys.appending(path: "feed.pub").path

        // Followed unsigned, then a key is given: the unsigned feed is refused, not a 304.
        let plainReader = work.appending(path: "plain-reader")
        let plainFeed = "http://127.0.0.1:\(unsigned.port)/feed"
        #expect(try Harness.galley(["sync", plainFeed, "--store", plainReader.path, "-q"]).status == 0)
        let unchanged = try Harness.galley(["sync", plainFeed, "--store", plainReader.path, "--json"])
        #expect(unchanged.json?["unchanged"] as? Bool == true, "the feed answers 304 to its ETag: \(unchanged.stdout)")
        let refused = try Harness.galley(["sync", plainFeed, "--store", plainReader.path, "--trust-key", trust, "--json"])
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect((refused.json?["error"] as? [String: Any])?["id"] as? String == "feed.signature", "\(refused.stdout)")

        // Followed unsigned from the signing server, then its key: read again and verified.
        let reader = work.appending(path: "reader")
        let feed = "http://127.0.0.1:\(signed.port)/feed"
        #expect(try Harness.galley(["sync", feed, "--store", reader.path, "-q"]).status == 0)
        let trusted = try Harness.galley(["sync", feed, "--store", reader.path, "--trust-key", trust, "--json"])
        #expect(trusted.status == 0, "\(trusted.stdout)\(trusted.stderr)")
        #expect(trusted.json?["unchanged"] as? Bool == false && trusted.json?["key_id"] as? String == keyID, "\(trusted.stdout)")
        let again = try Harness.galley(["sync", feed, "--store", reader.path, "--trust-key", trust, "--json"])
        #expect(again.json?["unchanged"] as? Bool == true && again.json?["key_id"] as? String == keyID, "\(again.stdout)")
        let other = try Harness.galley(["sync", feed, "--store", reader.path, "--trust-key", keys.appending(path: "other.pub").path, "--json"])
        #expect(other.status == 2 && (other.json?["error"] as? [String: Any])?["id"] as? String == "feed.signature", "\(other.stdout)")
        try Self.expectSchemas([("sync", unchanged.stdout), ("sync", trusted.stdout), ("sync", again.stdout), ("sync", refused.stdout)])
    }

    /// Signed feeds: serve signs with a key from `keys generate`; sync with the matching .pub
    /// follows it; another key, an unsigned feed and a changed body are refused before anything
    /// is written; a replayed answer past its expiry is followed with a warning (feedExpired).
    @Test func signedFeedsAreCheckedAgainstTheTrustedKey() throws {
        let work = try Harness.temporaryDirectory()
        let keys = work.appending(path: "keys")
        let generated = try Harness.galley(["keys", "generate", "-o", keys.path, "--json"])
        #expect(generated.status == 0, "\(generated.stdout)\(generated.stderr)")
        #expect(try Harness.galley(["keys", "generate", "-o", keys.path, "--name", "other", "-q"]).status == 0)
        // A name that is not a plain file name, and a pair already there, are refused; nothing
        // is written outside the folder or over the old pair.
        for name in ["../escape", ".hidden", "a/b", ""] {
            let refused = try Harness.galley(["keys", "generate", "-o", keys.path, "--name", name])
            #expect(refused.status == 2 && refused.stderr.contains("is not a file name"), "\(name): \(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: work.appending(path: "escape.key").path))
        let before = try Harness.snapshot(keys.path)
        let again = try Harness.galley(["keys", "generate", "-o", keys.path])
        #expect(again.status != 0 && again.stderr.contains("already exists") && again.stderr.contains("--force"), "\(again.stderr)")
        #expect(try Harness.snapshot(keys.path) == before)
        let keyID = try #require(generated.json?["key_id"] as? String)
        let mode = try FileManager.default.attributesOfItem(atPath: keys.appending(path: "feed.key").path)[.posixPermissions] as? Int
        #expect(mode == 0o600, "the private key is readable by its owner only")
        let source = work.appending(path: "source")
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", source.path, "-q"]).status == 0)
        let signed = try Harness.listening(["serve", "--store", source.path, "--port", "0", "--json",
                                            "--signing-key", keys.appending(path: "feed.key").path, "--signature-lifetime", "2s"])
        defer { signed.stop() }
        let unsigned = try Harness.listening(["serve", "--store", source.path, "--port", "0", "--json"])
        defer { unsigned.stop() }
        let feed = "http://127.0.0.1:\(signed.port)/feed"
        let trust = keys.appending(path: "feed.pub").path

        // The right key: followed, and the summary names the key and the expiry.
        let reader = work.appending(path: "reader")
        let followed = try Harness.galley(["sync", feed, "--store", reader.path, "--trust-key", trust, "--json"])
        #expect(followed.status == 0, "\(followed.stdout)\(followed.stderr)")
        #expect(followed.json?["key_id"] as? String == keyID)
        #expect(followed.json?["expires"] is String)
        #expect(try Self.issues(reader) == ["example-valid"])

        // Another key, no signature: refused, nothing imported.
        let refusals: [(String, String, String)] = [
            (feed, keys.appending(path: "other.pub").path, "not by the trusted key"),
            ("http://127.0.0.1:\(unsigned.port)/feed", trust, "is not signed"),
        ]
        var outputs: [(schema: String, text: String)] = [("sync", followed.stdout)]
        for (url, key, why) in refusals {
            let other = work.appending(path: "reader-\(UUID().uuidString)")
            let result = try Harness.galley(["sync", url, "--store", other.path, "--trust-key", key, "--json"])
            #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
            let error = result.json?["error"] as? [String: Any]
            #expect(error?["id"] as? String == "feed.signature")
            #expect((error?["message"] as? String)?.contains(why) == true, "\(result.stdout)")
            #expect(try Self.issues(other) == [])
            outputs.append(("sync", result.stdout))
        }
        // A private key where the public one belongs is named as such.
        let swapped = try Harness.galley(["sync", feed, "--store", reader.path, "--trust-key", keys.appending(path: "feed.key").path])
        #expect(swapped.status == 2 && swapped.stderr.contains("this is a private (signing) key"), "\(swapped.stderr)")

        // Capture a signed answer, then replay it: changed, it is refused; unchanged after its
        // expiry, it is followed with a warning.
        let capture = """
            import sys, urllib.request
            with urllib.request.urlopen(sys.argv[1]) as r:
                open(sys.argv[2], "wb").write(r.read())
                open(sys.argv[3], "w").write(r.headers["Galley-Signature"])
            """
        let body = work.appending(path: "feed.json")
        let signature = work.appending(path: "feed.sig")
        #expect(try Harness.tool("python3", ["-c", capture, feed, body.path, signature.path]).status == 0)
        let original = try Data(contentsOf: body)
        let changed = work.appending(path: "changed.json")
        try Data(String(decoding: original, as: UTF8.self).replacingOccurrences(of: "\"revision\" : ", with: "\"revision\" : 9").utf8).write(to: changed)
        for (file, expectOK) in [(changed, false), (body, true)] {
            let log = work.appending(path: "replay-\(expectOK).log")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", Harness.root.appending(path: "Tests/Support/fault_server.py").path, "replay",
                                 Harness.fixtures.appending(path: "zips/example-valid.zip").path, "example-valid", log.path, file.path, signature.path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            defer { process.terminate() }
            let port = try #require(Int(Harness.readLines(output.fileHandleForReading, 1).trimmingCharacters(in: .whitespacesAndNewlines)))
            if expectOK { usleep(2_200_000) }  // past the 2 s signature's expiry
            let fresh = work.appending(path: "replayed-\(expectOK)")
            let result = try Harness.galley(["sync", "http://127.0.0.1:\(port)/feed", "--store", fresh.path, "--trust-key", trust, "--events", "json"])
            let events = Self.events(result.stdout)
            outputs += Self.eventLines(result.stdout)
            if expectOK {
                #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
                let expired = events.first { $0["event"] as? String == "feedExpired" }
                #expect((expired?["error"] as? [String: Any])?["id"] as? String == "feed.signature", "\(result.stdout)")
                #expect(try Self.issues(fresh) == ["example-valid"])
            } else {
                #expect(result.status == 2)
                let failed = events.last
                #expect(failed?["event"] as? String == "syncFailed")
                #expect(((failed?["error"] as? [String: Any])?["message"] as? String)?.contains("does not match its content") == true, "\(result.stdout)")
                #expect(try Self.issues(fresh) == [])
            }
        }
        try Self.expectSchemas(outputs)
    }

    /// On a terminal, a download draws a progress bar on standard error (cleared before the
    /// next line); off a terminal, with --events or --quiet, none.
    @Test func aTerminalShowsTheDownloadsProgress() throws {
        let work = try Harness.temporaryDirectory()
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", work.path + "/", "-q"]).status == 0)
        let source = work.appending(path: "source")
        #expect(try Harness.galley(["import", work.appending(path: "com.example.harbour.2026-01.zip").path, "--store", source.path, "-q"]).status == 0)
        let server = try Harness.listening(["serve", "--store", source.path, "--port", "0", "--json"])
        defer { server.stop() }
        let feed = "http://127.0.0.1:\(server.port)/feed"
        let pty = Harness.root.appending(path: "Tests/Support/pty_run.py").path
        let shown = try Harness.tool("python3", [pty, Harness.galley.path, "sync", feed, "--store", work.appending(path: "a").path])
        #expect(shown.status == 0, "\(shown.stdout)\(shown.stderr)")
        #expect(shown.stderr.contains("downloading") && shown.stderr.contains("100% com.example.harbour.2026-01"), "\(shown.stderr.debugDescription)")
        #expect(shown.stderr.contains("\r\u{1B}[2K"), "the bar is redrawn in place and cleared")
        #expect(shown.stdout.contains("com.example.harbour.2026-01: imported"))
        let quiet = try Harness.tool("python3", [pty, Harness.galley.path, "sync", feed, "--store", work.appending(path: "b").path, "-q"])
        #expect(quiet.status == 0 && !quiet.stderr.contains("downloading"), "\(quiet.stderr.debugDescription)")
        let plain = try Harness.galley(["sync", feed, "--store", work.appending(path: "c").path])
        #expect(plain.status == 0 && !plain.stderr.contains("downloading"), "no bar off a terminal")
    }

    /// `--every` keeps following: a round, a pause, another round (here a 304), until SIGTERM;
    /// `--once` is the default and cannot be combined with it.
    @Test func everyKeepsFollowingUntilStopped() throws {
        let work = try Harness.temporaryDirectory()
        let source = work.appending(path: "source")
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", source.path, "-q"]).status == 0)
        let server = try Harness.listening(["serve", "--store", source.path, "--port", "0", "--json"])
        defer { server.stop() }
        let reader = work.appending(path: "reader")
        let process = Process()
        process.executableURL = Harness.galley
        process.arguments = ["sync", "http://127.0.0.1:\(server.port)/feed", "--store", reader.path, "--every", "1s", "--events", "json"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        // Two rounds: the first downloads, the second is told nothing changed.
        let text = String(decoding: Harness.read(output.fileHandleForReading, seconds: 20) { (data: Data) in
            String(decoding: data, as: UTF8.self).components(separatedBy: "\"downloadComplete\"").count > 2
        }, as: UTF8.self)
        let names = Self.events(text).map { $0["event"] as? String ?? "" }
        #expect(Array(names.prefix(6)) == ["feedChanged", "downloadStarted", "issueDownloadComplete", "downloadComplete",
                                           "feedUnchanged", "downloadComplete"], "\(text)")
        #expect(process.isRunning, "still following")
        process.terminate()
        process.waitUntilExit()
        #expect(try Self.issues(reader) == ["example-valid"])
        #expect(try Self.storeIsClean(reader))
        let both = try Harness.galley(["sync", "http://127.0.0.1:\(server.port)/feed", "--store", reader.path, "--once", "--every", "1m"])
        #expect(both.status == 2 && both.stderr.contains("--once or --every"), "\(both.stderr)")
    }
}
