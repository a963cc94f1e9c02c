import Foundation
import GalleyTestSupport
import Testing

/// Delta updates (docs/sync.md): a corrected issue is rebuilt from the version the reader's
/// store holds, fetching only what changed, from `galley serve`, nginx, a bucket, and hosts
/// that lie (`Tests/Support/range_server.py`).
@Suite(.serialized) struct DeltaSyncTests {
    static let appleID = "com.example.harbour.2026-01"

    /// The example issue packed, then packed again with one letter corrected (and a third time
    /// with another), each correction with a later `last_updated`: the versions a publisher
    /// would import one after the other.
    struct Versions {
        var zips: [URL]
        var sizes: [Int]
    }

    static func versions(_ work: URL) throws -> Versions {
        let source = work.appending(path: "source")
        try FileManager.default.copyItem(at: Harness.example, to: source)
        let letter = source.appending(path: "articles/04-letters/article.html")
        let issue = source.appending(path: "issue.yaml")
        var zips: [URL] = []
        for (index, fix) in [("", ""), ("the fog horn.", "the foghorn."), ("Night buses", "Night trams")].enumerated() {
            if !fix.0.isEmpty {
                let text = try String(contentsOf: letter, encoding: .utf8)
                #expect(text.contains(fix.0))
                try text.replacingOccurrences(of: fix.0, with: fix.1).write(to: letter, atomically: true, encoding: .utf8)
                let yaml = try String(contentsOf: issue, encoding: .utf8)
                try yaml.replacingOccurrences(of: "last_updated: 2026-01-0\(index + 3)T18:30:00Z", with: "last_updated: 2026-01-0\(index + 4)T18:30:00Z")
                    .write(to: issue, atomically: true, encoding: .utf8)
            }
            let out = work.appending(path: "v\(index + 1)")
            #expect(try Harness.galley(["pack", source.path, "-o", out.path + "/", "-q"]).status == 0)
            zips.append(out.appending(path: "\(appleID).zip"))
        }
        let sizes = try zips.map { try #require(try FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? Int) }
        return Versions(zips: zips, sizes: sizes)
    }

    /// The `downloads` entry of a sync's `--json` for the example issue.
    static func cost(_ result: Harness.Result) -> [String: Any]? {
        (result.json?["downloads"] as? [[String: Any]])?.first { $0["apple_id"] as? String == appleID }
    }

    /// A delta that rebuilt `size` bytes: fetched and reused add up to the file, most reused.
    static func expectDelta(_ result: Harness.Result, size: Int, _ comment: String) {
        #expect(result.status == 0, "\(comment): \(result.stdout)\(result.stderr)")
        let cost = Self.cost(result)
        let fetched = cost?["bytes_fetched"] as? Int ?? -1
        let reused = cost?["bytes_reused"] as? Int ?? -1
        #expect(cost?["delta"] as? Bool == true, "\(comment): \(result.stdout)")
        #expect(fetched + reused == size && reused > size / 2 && fetched < size / 3, "\(comment): fetched \(fetched), reused \(reused) of \(size)")
    }

    @Test func aCorrectionServedByGalleyServeFetchesOnlyWhatChanged() throws {
        let work = try Harness.temporaryDirectory()
        let versions = try Self.versions(work)
        let store = work.appending(path: "store")
        let reader = work.appending(path: "reader")
        #expect(try Harness.galley(["import", versions.zips[0].path, "--store", store.path, "-q"]).status == 0)
        let server = try Harness.listening(["serve", "--store", store.path, "--port", "0", "--json"])
        defer { server.stop() }
        let feed = "http://127.0.0.1:\(server.port)/feed"

        let first = try Harness.galley(["sync", feed, "--store", reader.path, "--json"])
        #expect(Self.cost(first)?["delta"] as? Bool == false && Self.cost(first)?["bytes_fetched"] as? Int == versions.sizes[0], "\(first.stdout)")

        #expect(try Harness.galley(["import", versions.zips[1].path, "--store", store.path, "--force", "-q"]).status == 0)
        let second = try Harness.galley(["sync", feed, "--store", reader.path, "--json"])
        Self.expectDelta(second, size: versions.sizes[1], "galley serve")
        #expect(try SyncCommandTests.storeIsClean(reader))
        #expect(try FileManager.default.contentsOfDirectory(atPath: reader.appending(path: "downloads").path) == [".lock"])
        try SyncCommandTests.expectSchemas([("sync", second.stdout)])

        // --no-delta: the third version whole; the events say what it cost.
        #expect(try Harness.galley(["import", versions.zips[2].path, "--store", store.path, "--force", "-q"]).status == 0)
        let whole = try Harness.galley(["sync", feed, "--store", reader.path, "--no-delta", "--events", "json"])
        #expect(whole.status == 0, "\(whole.stderr)")
        let complete = SyncCommandTests.events(whole.stdout).first { $0["event"] as? String == "issueDownloadComplete" }
        #expect(complete?["bytes"] as? Int == versions.sizes[2] && complete?["reused"] as? Int == 0, "\(whole.stdout)")
        try SyncCommandTests.expectSchemas(SyncCommandTests.eventLines(whole.stdout))
    }

    /// The same from a folder served by nginx and from a bucket of the S3 test server:
    /// nothing beyond ranged GETs is asked of the host.
    @Test func aCorrectionFromAStaticHostIsADelta() throws {
        let work = try Harness.temporaryDirectory()
        let versions = try Self.versions(work)
        let store = work.appending(path: "store")
        let site = work.appending(path: "site")
        let reader = work.appending(path: "reader")
        #expect(try Harness.galley(["import", versions.zips[0].path, "--store", store.path, "-q"]).status == 0)
        #expect(try Harness.galley(["publish", "--store", store.path, "--to", site.path, "-q"]).status == 0)
        let nginx = try NginxPeer.start(server: "root \(site.path);")
        defer { nginx.stop() }
        #expect(try Harness.galley(["sync", nginx.base + "/feed.json", "--store", reader.path, "-q"]).status == 0)
        #expect(try Harness.galley(["import", versions.zips[1].path, "--store", store.path, "--force", "-q"]).status == 0)
        #expect(try Harness.galley(["publish", "--store", store.path, "--to", site.path, "-q"]).status == 0)
        Self.expectDelta(try Harness.galley(["sync", nginx.base + "/feed.json", "--store", reader.path, "--json"]), size: versions.sizes[1], "nginx")
        let ranged = nginx.requests().filter { $0.contains(".zip ") && $0.contains(" 206 ") }
        #expect(ranged.count >= 2 && ranged.count <= 34, "a few ranged requests: \(ranged)")
        #expect(try SyncCommandTests.storeIsClean(reader))

        guard PostgresTestServer.s3 != nil || PostgresTestServer.enabled else { return }
        let bucket = try BucketPublishCommandTests.bucket()
        let address = "s3://\(bucket.name)/site"
        let feed = "\(bucket.environment["AWS_ENDPOINT_URL"] ?? "")/\(bucket.name)/site/feed.json"
        let other = work.appending(path: "other")
        #expect(try Harness.galley(["import", versions.zips[0].path, "--store", work.appending(path: "s3store").path, "-q"]).status == 0)
        #expect(try Harness.galley(["publish", "--store", work.appending(path: "s3store").path, "--to", address, "-q"],
                                   environment: bucket.environment).status == 0)
        #expect(try Harness.galley(["sync", feed, "--store", other.path, "-q"]).status == 0)
        #expect(try Harness.galley(["import", versions.zips[1].path, "--store", work.appending(path: "s3store").path, "--force", "-q"]).status == 0)
        #expect(try Harness.galley(["publish", "--store", work.appending(path: "s3store").path, "--to", address, "-q"],
                                   environment: bucket.environment).status == 0)
        Self.expectDelta(try Harness.galley(["sync", feed, "--store", other.path, "--json"]), size: versions.sizes[1], "S3")
        #expect(try SyncCommandTests.storeIsClean(other))
    }

    /// Hosts that lie about ranges: one without them (200 for a ranged request), one whose
    /// ranged bytes are other bytes, one whose directory places every entry at offset 0. Each
    /// ends in a whole download of the right file, said by `deltaFallback`, never a wrong issue.
    /// A folder `range_server.py` serves in `mode`, offering version `index` of `versions`.
    struct LyingHost {
        let site: URL
        let versions: Versions
        let log: URL
        let server: Process
        let feed: String

        init(_ mode: String, _ versions: Versions, in work: URL) throws {
            self.versions = versions
            site = work.appending(path: "site")
            log = work.appending(path: "requests.log")
            try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
            server = Process()
            server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            server.arguments = ["python3", Harness.root.appending(path: "Tests/Support/range_server.py").path, mode, site.path, log.path]
            let output = Pipe()
            server.standardOutput = output
            try server.run()
            let port = try #require(Int(Harness.readLines(output.fileHandleForReading, 1).trimmingCharacters(in: .whitespacesAndNewlines)))
            feed = "http://127.0.0.1:\(port)/feed.json"
        }

        func offer(_ index: Int) throws {
            let digest = try Harness.python("""
                import hashlib, sys
                print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())
                """, [versions.zips[index].path]).trimmingCharacters(in: .whitespacesAndNewlines)
            try? FileManager.default.removeItem(at: site.appending(path: "\(digest).zip"))
            try FileManager.default.copyItem(at: versions.zips[index], to: site.appending(path: "\(digest).zip"))
            try """
                {"revision": \(index + 1), "packages": [{"apple_id": "\(DeltaSyncTests.appleID)", "version": \(index + 1),
                  "file_path": "\(digest).zip", "sha256": "\(digest)", "size": \(versions.sizes[index])}]}
                """.write(to: site.appending(path: "feed.json"), atomically: true, encoding: .utf8)
        }

        func stop() { server.terminate() }
    }

    /// A sync killed in the middle of a delta leaves the held issue as it was; the next one
    /// removes the half-built file and makes the delta again.
    @Test func aSyncKilledDuringADeltaLeavesTheHeldIssue() throws {
        let work = try Harness.temporaryDirectory()
        let versions = try Self.versions(work)
        let host = try LyingHost("slow", versions, in: work)
        defer { host.stop() }
        try host.offer(0)
        let reader = work.appending(path: "reader")
        #expect(try Harness.galley(["sync", host.feed, "--store", reader.path, "-q"]).status == 0)
        let before = try Harness.galley(["issue", "show", Self.appleID, "--store", reader.path, "--json"]).stdout
        try host.offer(1)
        let sync = Process()
        sync.executableURL = Harness.galley
        sync.arguments = ["sync", host.feed, "--store", reader.path, "-q"]
        sync.standardOutput = FileHandle.nullDevice
        sync.standardError = FileHandle.nullDevice
        try sync.run()
        let deadline = Date().addingTimeInterval(20)
        func ranged() -> Int {
            ((try? String(contentsOf: host.log, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains(".zip range=bytes") }.count
        }
        while ranged() < 2, Date() < deadline { usleep(20_000) }
        kill(sync.processIdentifier, SIGKILL)
        sync.waitUntilExit()
        let downloads = reader.appending(path: "downloads")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).contains { $0.hasSuffix(".zip.delta") },
                "killed while the delta was being written")
        #expect(try Harness.galley(["issue", "show", Self.appleID, "--store", reader.path, "--json"]).stdout == before)
        #expect(try SyncCommandTests.storeIsClean(reader))

        let again = try Harness.galley(["sync", host.feed, "--store", reader.path, "--json"])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(Self.cost(again)?["delta"] as? Bool == true, "\(again.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path) == [".lock"])
        #expect(try SyncCommandTests.storeIsClean(reader))
    }

    @Test(arguments: ["norange", "otherbytes", "liedir"])
    func aLyingHostEndsInAWholeDownload(_ mode: String) throws {
        let work = try Harness.temporaryDirectory()
        let versions = try Self.versions(work)
        let host = try LyingHost(mode, versions, in: work)
        defer { host.stop() }
        try host.offer(0)
        let feed = host.feed
        let reader = work.appending(path: "reader")
        #expect(try Harness.galley(["sync", feed, "--store", reader.path, "-q"]).status == 0)

        try host.offer(1)
        let result = try Harness.galley(["sync", feed, "--store", reader.path, "--events", "json"])
        #expect(result.status == 0, "\(mode): \(result.stdout)\(result.stderr)")
        let events = SyncCommandTests.events(result.stdout)
        let fallback = events.first { $0["event"] as? String == "deltaFallback" }
        #expect(fallback != nil, "\(mode): \(result.stdout)")
        let complete = events.first { $0["event"] as? String == "issueDownloadComplete" }
        #expect(complete?["reused"] as? Int == 0 && (complete?["bytes"] as? Int ?? 0) >= versions.sizes[1], "\(mode): \(result.stdout)")
        #expect(try SyncCommandTests.storeIsClean(reader))
        #expect(try FileManager.default.contentsOfDirectory(atPath: reader.appending(path: "downloads").path) == [".lock"])
        let again = try Harness.galley(["sync", feed, "--store", reader.path, "--json"])
        #expect((again.json?["current"] as? [String]) == [Self.appleID] || again.json?["unchanged"] as? Bool == true, "\(again.stdout)")
    }
}
