import Foundation
import Glibc
import Testing

/// Galley's delivery behind the infrastructure publishers put in front of it, with the real
/// peer (Debian's nginx): a caching proxy in front of `serve`, and a static host of the feed
/// and zips.
@Suite(.serialized) struct DeliveryInfrastructureTests {
    /// How long the proxy may keep `/feed` (`--shared-max-age`).
    static let fresh = 4.0

    /// Through nginx's `proxy_cache`: sync's "nothing changed" stays one 304 (answered by the
    /// cache while the feed is fresh, revalidated upstream once it is not), the links name the
    /// proxy (`--trusted-proxy`), a file by name is never answered stale after a re-import, and a
    /// content-addressed one is cached.
    @Test func syncAndRevalidationWorkThroughACachingProxy() throws {
        let work = try Harness.temporaryDirectory()
        let source = work.appending(path: "source")
        let reader = work.appending(path: "reader")
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", source.path, "-q"]).status == 0)
        let server = try Harness.listening(["serve", "--store", source.path, "--port", "0", "--json", "--trusted-proxy", "127.0.0.1",
                                            "--shared-max-age", String(Int(Self.fresh)), "--stale-while-revalidate", "0"])
        defer { server.stop() }
        let nginx = try NginxPeer.start(server: """
            location / {
                proxy_pass http://127.0.0.1:\(server.port);
                proxy_http_version 1.1;
                proxy_set_header Connection "";
                proxy_set_header X-Forwarded-Host $server_addr:$server_port;
                proxy_cache galley;
                proxy_cache_revalidate on;
            }
            """, http: "proxy_cache_path cache levels=1:2 keys_zone=galley:1m max_size=50m inactive=10m use_temp_path=off;")
        defer { nginx.stop() }
        let feed = nginx.base + "/feed"
        // nginx logs a request once it has answered it, so its line may come a moment after the
        // client has its answer: wait (5 s at most) for the `count`th /feed line.
        func feedLine(_ count: Int) -> String {
            let deadline = Date().addingTimeInterval(5)
            var lines = nginx.requests().filter { $0.hasPrefix("GET /feed ") }
            while lines.count < count, Date() < deadline {
                usleep(20_000)
                lines = nginx.requests().filter { $0.hasPrefix("GET /feed ") }
            }
            return lines.count >= count ? lines[count - 1] : "(no request \(count) in \(lines))"
        }

        // The feed is fresh in the cache for `fresh` seconds from when it was stored, which
        // nginx counts in whole seconds: the waits for it to be stale count from just before
        // the request that stored it, with a second and a half to spare, not from a fixed
        // pause after the last step (which a busy machine stretches).
        var storedAt = Date()
        func waitUntilStale() {
            let stale = storedAt.addingTimeInterval(Self.fresh + 1.5).timeIntervalSinceNow
            if stale > 0 { usleep(useconds_t(stale * 1_000_000)) }
        }
        let first = try Harness.galley(["sync", feed, "--store", reader.path, "--json"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(try SyncCommandTests.issues(reader) == ["example-valid"])
        // The feed's link named the proxy, so the zip came through it too.
        _ = feedLine(1)
        #expect(nginx.requests().contains { $0.hasPrefix("GET /packages/example-valid/") && $0.contains(" 200 ") }, "\(nginx.requests())")

        let beforeSecond = Date()
        let second = try Harness.galley(["sync", feed, "--store", reader.path, "--json"])
        #expect(second.json?["unchanged"] as? Bool == true, "\(second.stdout)\(second.stderr)")
        let secondLine = feedLine(2)
        // (A machine so busy that the first sync outlasted the feed's freshness sees it
        // revalidated instead, which is right too.)
        let late = Date().timeIntervalSince(storedAt) > Self.fresh
        #expect(secondLine.hasPrefix("GET /feed 304 HIT") || (late && secondLine.hasPrefix("GET /feed 304 REVALIDATED 304")),
                "the cache answered the client's If-None-Match: \(secondLine)")
        if !secondLine.contains(" HIT") { storedAt = beforeSecond }

        waitUntilStale()
        storedAt = Date()
        let third = try Harness.galley(["sync", feed, "--store", reader.path, "--json"])
        #expect(third.json?["unchanged"] as? Bool == true, "\(third.stdout)\(third.stderr)")
        let thirdLine = feedLine(3)
        #expect(thirdLine.hasPrefix("GET /feed 304 REVALIDATED 304"), "stale, it asked serve with its ETag: \(thirdLine)")

        // A file by name: never kept (no-cache), so the new content shows at once.
        func get(_ path: String) throws -> (Data, String) {
            let script = """
                import sys, urllib.request
                with urllib.request.urlopen(sys.argv[1]) as r:
                    sys.stdout.write(r.read().hex() + " " + (r.headers["Cache-Control"] or ""))
                """
            let text = try Harness.python(script, [nginx.base + path])
            let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
            let bytes = Data(stride(from: 0, to: parts[0].count, by: 2).compactMap {
                UInt8(parts[0][parts[0].index(parts[0].startIndex, offsetBy: $0)...].prefix(2), radix: 16)
            })
            return (bytes, parts.count > 1 ? parts[1] : "")
        }
        let named = "/issues/example-valid/files/latest.json"
        let (before, namedCaching) = try get(named)
        #expect(namedCaching == "public, no-cache")
        let assets = try Harness.python("""
            import json, sys, urllib.request
            print(json.load(urllib.request.urlopen(sys.argv[1]))["items"][0]["path"])
            """, [nginx.base + "/assets?issue=example-valid"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(assets.split(separator: "/").count == 5, "\(assets)")
        _ = try get(assets)
        let (_, addressedCaching) = try get(assets)
        #expect(addressedCaching.contains("immutable"))
        func assetLines() -> [String] { nginx.requests().filter { $0.hasPrefix("GET \(assets) ") } }
        let deadline = Date().addingTimeInterval(5)
        while assetLines().count < 2, Date() < deadline { usleep(20_000) }
        #expect(assetLines().last?.hasPrefix("GET \(assets) 200 HIT") == true, "\(assetLines())")

        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "versions/edited/example-valid.zip").path, "--store", source.path,
                                    "--force", "-q"]).status == 0)
        let (after, _) = try get(named)
        #expect(after != before, "the proxy answered the old latest.json after a re-import")

        waitUntilStale()
        let fourth = try Harness.galley(["sync", feed, "--store", reader.path, "--json"])
        // The new feed reached the reader, and its zip (a new content address) came through the
        // proxy. (This fixture keeps its last_updated, so the reader's import gate then refuses
        // it as a conflict: what reaches the gate is what this test is about.)
        #expect(fourth.json?["unchanged"] as? Bool == false, "\(fourth.stdout)")
        _ = feedLine(4)
        let zips = Set(nginx.requests().filter { $0.hasPrefix("GET /packages/example-valid/") }.map { $0.split(separator: " ")[1] })
        #expect(zips.count == 2, "\(zips)")
        #expect(try SyncCommandTests.storeIsClean(reader))
    }

    /// A cut download from a static host resumes with the host's own validator (nginx's ETag,
    /// `"6b0f229f-b649cf5"`-shaped, not the feed's SHA-256), and the result is still checked
    /// against the feed's size and SHA-256.
    @Test func aCutDownloadFromAStaticHostResumesWithItsValidator() throws {
        let work = try Harness.temporaryDirectory()
        let site = work.appending(path: "site")
        let reader = work.appending(path: "reader")
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", site.path + "/", "-q"]).status == 0)
        let zip = site.appending(path: "com.example.harbour.2026-01.zip")
        let digest = try Harness.python("""
            import hashlib, os, sys
            print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest(), os.path.getsize(sys.argv[1]))
            """, [zip.path]).split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let feed = """
            {"revision": 1, "packages": [{"apple_id": "com.example.harbour.2026-01", "version": 1,
              "file_path": "com.example.harbour.2026-01.zip", "sha256": "\(digest[0])", "size": \(digest[1])}]}
            """
        try feed.write(to: site.appending(path: "feed.json"), atomically: true, encoding: .utf8)
        // A first download is slow (a window to cut it); a resumed one (it sends Range) is not.
        let nginx = try NginxPeer.start(server: "root \(site.path);\nlimit_rate $first_rate;",
                                        http: "map $http_range $first_rate { \"\" 40k; default 0; }")
        defer { nginx.stop() }

        let sync = Process()
        sync.executableURL = Harness.galley
        sync.arguments = ["sync", nginx.base + "/feed.json", "--store", reader.path, "-q"]
        sync.standardOutput = FileHandle.nullDevice
        sync.standardError = FileHandle.nullDevice
        try sync.run()
        let downloads = reader.appending(path: "downloads")
        let partial = downloads.appending(path: "\(digest[0]).zip.partial")
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, ((try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0) < 100_000 {
            usleep(50_000)
        }
        kill(sync.processIdentifier, SIGKILL)
        sync.waitUntilExit()
        let had = try #require(try FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int)
        #expect(had >= 100_000 && had < Int(digest[1]) ?? 0)
        let validator = try String(contentsOf: downloads.appending(path: "\(digest[0]).zip.partial-validator"), encoding: .utf8)
        #expect(validator.hasPrefix("\"") && validator != "\"\(digest[0])\"", "nginx's own ETag: \(validator)")

        let resumed = try Harness.galley(["sync", nginx.base + "/feed.json", "--store", reader.path, "--json"])
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        // nginx's log writes a quote in a value as \x22, and a line once it has answered.
        let logged = Date().addingTimeInterval(5)
        while nginx.requests().filter({ $0.contains(".zip ") }).count < 2, Date() < logged { usleep(20_000) }
        let zipRequests = nginx.requests().filter { $0.contains(".zip ") }.map { $0.replacingOccurrences(of: "\\x22", with: "\"") }
        let last = zipRequests.last ?? ""
        #expect(last.contains(" 206 "), "\(zipRequests)")
        #expect(last.contains("\"bytes=\(had)-\" \"\(validator)\""), "resumed at the cut with nginx's ETag: \(zipRequests)")
        #expect(try SyncCommandTests.issues(reader) == ["com.example.harbour.2026-01"])
        #expect(try SyncCommandTests.storeIsClean(reader))
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path) == [".lock"], "no partial or validator left")
    }
}
