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
        #expect(try FileManager.default.contentsOfDirectory(atPath: reader.appending(path: "downloads").path) == [])
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
        try Self.expectSchemas(Self.eventLines(first.stdout) + [("sync", second.stdout), ("sync", third.stdout)])
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
    static func faultServer(_ scenario: String, log: URL) throws -> (Process, Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Harness.root.appending(path: "Tests/Support/fault_server.py").path, scenario,
                             Harness.fixtures.appending(path: "zips/example-valid.zip").path, "example-valid", log.path]
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

    /// Faults that must leave the store as it was, with the exit status and error id each gets.
    @Test(arguments: [
        ("badsha", Int32(1), "download.mismatch"),
        ("down", Int32(2), "feed.unreachable"),
        ("garbage", Int32(2), "feed.invalid"),
    ])
    func faultsLeaveTheStoreAsItWas(scenario: String, status: Int32, id: String) throws {
        let work = try Harness.temporaryDirectory()
        let reader = work.appending(path: "reader")
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "versions/example-valid.zip").path, "--store", reader.path, "-q"]).status == 0)
        let before = try Harness.galley(["issue", "example-valid", "--store", reader.path, "--json"]).stdout
        let (server, port) = try Self.faultServer(scenario, log: work.appending(path: "requests.log"))
        defer { server.terminate() }
        let result = try Harness.galley(["sync", "http://127.0.0.1:\(port)/feed", "--store", reader.path, "--retries", "1", "--json"])
        #expect(result.status == status, "\(result.stdout)\(result.stderr)")
        let error = (result.json?["error"] as? [String: Any]) ?? ((result.json?["failures"] as? [[String: Any]])?.first?["error"] as? [String: Any])
        #expect(error?["id"] as? String == id, "\(result.stdout)")
        #expect(try Harness.galley(["issue", "example-valid", "--store", reader.path, "--json"]).stdout == before)
        #expect(try Self.storeIsClean(reader))
        // The same fault under --events json: the last line says how the sync ended.
        let events = try Harness.galley(["sync", "http://127.0.0.1:\(port)/feed", "--store", reader.path, "--retries", "0", "--events", "json"])
        let last = Self.events(events.stdout).last
        #expect(last?["event"] as? String == (status == 2 ? "syncFailed" : "downloadComplete"), "\(events.stdout)")
        try Self.expectSchemas([("sync", result.stdout)] + Self.eventLines(events.stdout))
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

    @Test func aFeedThatWentBackIsRefused() throws {
        let work = try Harness.temporaryDirectory()
        let reader = work.appending(path: "reader")
        let (server, port) = try Self.faultServer("rollback", log: work.appending(path: "requests.log"))
        defer { server.terminate() }
        let url = "http://127.0.0.1:\(port)/feed"
        #expect(try Harness.galley(["sync", url, "--store", reader.path, "-q"]).status == 0)
        // The same address now answers an older revision (a restored backup, a replayed answer).
        let result = try Harness.galley(["sync", url, "--store", reader.path, "--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect((result.json?["error"] as? [String: Any])?["id"] as? String == "feed.rollback")
        #expect(try Self.issues(reader) == ["example-valid"])
        #expect(try Self.storeIsClean(reader))
    }
}
