import Foundation
import GalleyTestSupport
import Testing

/// `galley publish` into a folder, served by a real static host (Debian's nginx), followed by
/// `galley sync` as a reader would: the feed, the listings, the files, increments that never
/// leave a feed naming a missing file, and a detached signature.
@Suite(.serialized) struct PublishCommandTests {
    /// Every relative path a published JSON file names (`file_path`, `path`), resolved.
    static func namedPaths(_ site: URL) throws -> [String] {
        let script = """
            import json, os, sys
            root = sys.argv[1]
            named = set()
            def walk(value):
                if isinstance(value, dict):
                    for key, item in value.items():
                        if key in ("file_path", "path") and isinstance(item, str) and item:
                            named.add(item)
                        walk(item)
                elif isinstance(value, list):
                    for item in value: walk(item)
            for folder, _, files in os.walk(root):
                for name in files:
                    if name.endswith(".json") and not name.startswith("."):
                        walk(json.load(open(os.path.join(folder, name))))
            for path in sorted(named): print(path)
            """
        return try Harness.python(script, [site.path]).split(separator: "\n").map(String.init)
    }

    @Test func aPublishedSiteIsFollowedFromAStaticHostAndUpdatedInPlace() throws {
        let work = try Harness.temporaryDirectory()
        let store = work.appending(path: "store")
        let site = work.appending(path: "site")
        let reader = work.appending(path: "reader")
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", work.path + "/", "-q"]).status == 0)
        for zip in [work.appending(path: "com.example.harbour.2026-01.zip").path, Harness.fixtures.appending(path: "zips/example-valid.zip").path] {
            #expect(try Harness.galley(["import", zip, "--store", store.path, "-q"]).status == 0)
        }
        let first = try Harness.galley(["publish", "--store", store.path, "--to", site.path, "--json"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(first.json?["issues"] as? Int == 2)
        #expect((first.json?["written"] as? Int ?? 0) > 10)
        // Every path the JSON names is a file of the site: nothing dangles.
        for path in try Self.namedPaths(site) {
            #expect(FileManager.default.fileExists(atPath: site.appending(path: path).path), "\(path) is named but missing")
        }

        let nginx = try NginxPeer.start(server: "root \(site.path);")
        defer { nginx.stop() }
        let followed = try Harness.galley(["sync", nginx.base + "/feed.json", "--store", reader.path, "--json"])
        #expect(followed.status == 0, "\(followed.stdout)\(followed.stderr)")
        #expect(try SyncCommandTests.issues(reader) == ["com.example.harbour.2026-01", "example-valid"])
        #expect(try SyncCommandTests.storeIsClean(reader))
        // The listings and files as an app reads them from the host, with their media types.
        let browsed = try Harness.python("""
            import json, sys, urllib.request
            base = sys.argv[1] + "/"
            issues = json.load(urllib.request.urlopen(base + "issues.json"))["items"]
            print(sorted(i["apple_id"] for i in issues))
            issue = json.load(urllib.request.urlopen(base + "issues/com.example.harbour.2026-01.json"))
            article = json.load(urllib.request.urlopen(base + "articles/" + issue["articles"][0]["global_id"] + ".json"))
            assets = json.load(urllib.request.urlopen(base + "issues/com.example.harbour.2026-01/assets.json"))["items"]
            jpeg = [a for a in assets if a["file_name"].endswith(".jpg")][0]
            with urllib.request.urlopen(base + jpeg["path"]) as r:
                print(r.status, r.headers["Content-Type"], len(r.read()) > 0)
            print(article["article"]["global_id"] == issue["articles"][0]["global_id"], "body" in article)
            """, [nginx.base])
        #expect(browsed == "['com.example.harbour.2026-01', 'example-valid']\n200 image/jpeg True\nTrue True\n")

        // Again, unchanged: nothing written, nothing removed.
        let again = try Harness.galley(["publish", "--store", store.path, "--to", site.path, "--json"])
        #expect(again.json?["written"] as? Int == 0 && again.json?["removed"] as? Int == 0, "\(again.stdout)")

        // A corrected issue: its new zip is written, the old one removed after the new feed.
        let oldZips = try FileManager.default.contentsOfDirectory(atPath: site.appending(path: "packages/example-valid").path)
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "versions/edited/example-valid.zip").path, "--store", store.path,
                                    "--force", "-q"]).status == 0)
        let third = try Harness.galley(["publish", "--store", store.path, "--to", site.path, "--json"])
        #expect(third.status == 0)
        #expect((third.json?["written"] as? Int ?? 0) >= 3 && (third.json?["removed"] as? Int ?? 0) >= 1, "\(third.stdout)")
        let newZips = try FileManager.default.contentsOfDirectory(atPath: site.appending(path: "packages/example-valid").path)
        #expect(newZips.count == 1 && newZips != oldZips, "\(oldZips) -> \(newZips)")
        for path in try Self.namedPaths(site) {
            #expect(FileManager.default.fileExists(atPath: site.appending(path: path).path), "\(path) is named but missing")
        }
        // A deleted issue leaves the site, files and all.
        #expect(try Harness.galley(["delete", "example-valid", "--store", store.path, "--yes", "-q"]).status == 0)
        #expect(try Harness.galley(["publish", "--store", store.path, "--to", site.path, "-q"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: site.appending(path: "packages/example-valid").path))
        #expect(!FileManager.default.fileExists(atPath: site.appending(path: "issues/5f0000000000000000000010").path))
        #expect(!FileManager.default.fileExists(atPath: site.appending(path: "issues/example-valid.json").path))
    }

    /// A signed static feed: `feed.json.sig` beside it, which `sync --trust-key` fetches when
    /// the host sends no `Galley-Signature` header; a feed changed after signing is refused.
    @Test func aSignedSiteIsCheckedFromItsDetachedSignature() throws {
        let work = try Harness.temporaryDirectory()
        let store = work.appending(path: "store")
        let site = work.appending(path: "site")
        let keys = work.appending(path: "keys")
        #expect(try Harness.galley(["keys", "generate", "-o", keys.path, "-q"]).status == 0)
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", store.path, "-q"]).status == 0)
        let published = try Harness.galley(["publish", "--store", store.path, "--to", site.path, "--signing-key",
                                            keys.appending(path: "feed.key").path, "--json"])
        #expect(published.status == 0, "\(published.stderr)")
        #expect(published.json?["signature_expires"] is String)
        let nginx = try NginxPeer.start(server: "root \(site.path);")
        defer { nginx.stop() }
        let trust = keys.appending(path: "feed.pub").path
        let followed = try Harness.galley(["sync", nginx.base + "/feed.json", "--store", work.appending(path: "reader").path,
                                           "--trust-key", trust, "--json"])
        #expect(followed.status == 0, "\(followed.stdout)\(followed.stderr)")

        let feed = site.appending(path: "feed.json")
        let text = try String(contentsOf: feed, encoding: .utf8)
        try text.replacingOccurrences(of: "\"revision\" : ", with: "\"revision\" : 9").write(to: feed, atomically: true, encoding: .utf8)
        let refused = try Harness.galley(["sync", nginx.base + "/feed.json", "--store", work.appending(path: "other").path,
                                          "--trust-key", trust, "--json"])
        #expect(refused.status == 2)
        #expect((refused.json?["error"] as? [String: Any])?["id"] as? String == "feed.signature", "\(refused.stdout)")
    }

    @Test func aBucketWithoutCredentialsOrAnEmptyFolderIsAUsageError() throws {
        let blank = ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""]
        for to in ["s3://bucket/prefix", "s3:///prefix", ""] {
            let result = try Harness.galley(["publish", "--store", "nowhere", "--to", to], environment: blank)
            #expect(result.status == 2, "\(to): \(result.stderr)")
        }
        let missing = try Harness.galley(["publish", "--store", "nowhere", "--to", "s3://bucket/prefix", "--json"], environment: blank)
        let error = missing.json?["error"] as? [String: Any]
        #expect(error?["id"] as? String == "usage" && (error?["message"] as? String ?? "").contains("AWS_ACCESS_KEY_ID"), "\(missing.stdout)")
    }
}

/// `galley publish --to s3://…` into the S3 test server (SeaweedFS, a real S3 server that checks
/// signatures; scripts/s3-test-server.sh), read back as a reader app does: anonymously, from
/// the bucket's own address, with `galley sync`.
@Suite(.serialized, .enabled(if: PostgresTestServer.s3 != nil || PostgresTestServer.enabled, "needs GALLEY_TEST_S3 (make test starts a server)"))
struct BucketPublishCommandTests {
    /// A new bucket on the test server; returns its address and the publisher's environment.
    static func bucket() throws -> (name: String, environment: [String: String]) {
        let environment = try PostgresTestServer.s3Environment()
        let name = PostgresTestServer.uniqueName("galley-cli-site")
        let made = try Harness.tool("python3", [Harness.root.appending(path: "Tests/Support/s3_request.py").path, "PUT",
                                                "\(environment["AWS_ENDPOINT_URL"] ?? "")/\(name)"], environment: environment)
        #expect(made.stdout.hasPrefix("200"), "\(made.stdout)\(made.stderr)")
        return (name, environment)
    }

    /// A store of the example issue and the fixture, published into a fresh bucket.
    static func published(_ work: URL) throws -> (feed: String, environment: [String: String]) {
        let store = work.appending(path: "store")
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", work.path + "/", "-q"]).status == 0)
        for zip in [work.appending(path: "com.example.harbour.2026-01.zip").path, Harness.fixtures.appending(path: "zips/example-valid.zip").path] {
            #expect(try Harness.galley(["import", zip, "--store", store.path, "-q"]).status == 0)
        }
        let (name, environment) = try bucket()
        let result = try Harness.galley(["publish", "--store", store.path, "--to", "s3://\(name)/news", "--json"], environment: environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.json?["to"] as? String == "s3://\(name)/news" && result.json?["issues"] as? Int == 2, "\(result.stdout)")
        return ("\(environment["AWS_ENDPOINT_URL"] ?? "")/\(name)/news/feed.json", environment)
    }

    /// Followed anonymously from the bucket (its listing stays closed); an unchanged feed is one
    /// conditional request the bucket answers 304.
    @Test func aPublishedBucketIsFollowedAnonymously() throws {
        let work = try Harness.temporaryDirectory()
        let reader = work.appending(path: "reader")
        let (feed, _) = try Self.published(work)
        let followed = try Harness.galley(["sync", feed, "--store", reader.path, "--json"])
        #expect(followed.status == 0, "\(followed.stdout)\(followed.stderr)")
        #expect(try SyncCommandTests.issues(reader) == ["com.example.harbour.2026-01", "example-valid"])
        #expect(try SyncCommandTests.storeIsClean(reader))
        let again = try Harness.galley(["sync", feed, "--store", reader.path, "--json"])
        #expect(again.json?["unchanged"] as? Bool == true, "\(again.stdout)")
    }

    /// A download cut after its first 100 kB resumes from the bucket with the bucket's own ETag
    /// (an MD5, not the feed's SHA-256) and is checked against the SHA-256 at the end. The cut is
    /// made by reading the first bytes of the object as sync would and stopping: on loopback
    /// the bucket sends a zip too fast for a kill to land inside it.
    @Test func aCutDownloadResumesFromTheBucket() throws {
        let work = try Harness.temporaryDirectory()
        let (feed, _) = try Self.published(work)
        // The state a sync killed after 100 kB leaves: the bytes, and the validator of the answer.
        let cut = """
            import json, os, sys, urllib.parse, urllib.request
            feed_url, downloads, corrupt = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
            feed = json.load(urllib.request.urlopen(feed_url))
            package = [p for p in feed["packages"] if p["apple_id"] == "com.example.harbour.2026-01"][0]
            with urllib.request.urlopen(urllib.parse.urljoin(feed_url, package["file_path"])) as answer:
                head = answer.read(100_000)
                tag = answer.headers["ETag"]
            if corrupt: head = bytes(len(head))
            os.makedirs(downloads, exist_ok=True)
            partial = os.path.join(downloads, package["sha256"] + ".zip.partial")
            open(partial, "wb").write(head)
            open(partial + "-validator", "w").write(tag)
            print(tag, package["sha256"])
            """
        let reader = work.appending(path: "reader")
        let made = try Harness.python(cut, [feed, reader.appending(path: "downloads").path, "0"]).split(separator: " ").map(String.init)
        #expect(made.count == 2 && made[0].hasPrefix("\"") && !made[0].contains(made[1].trimmingCharacters(in: .whitespacesAndNewlines)),
                "the bucket's own ETag: \(made)")
        let resumed = try Harness.galley(["sync", feed, "--store", reader.path, "--events", "json"])
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        let started = SyncCommandTests.events(resumed.stdout).filter { $0["event"] as? String == "downloadStarted" }
        #expect(started.contains { $0["apple_id"] as? String == "com.example.harbour.2026-01" && $0["bytes"] as? Int == 100_000 }, "\(started)")
        #expect(try SyncCommandTests.issues(reader) == ["com.example.harbour.2026-01", "example-valid"])
        #expect(try SyncCommandTests.storeIsClean(reader))
        #expect(try FileManager.default.contentsOfDirectory(atPath: reader.appending(path: "downloads").path) == [".lock"])

        // The same cut with other bytes kept: the bucket sends only the rest (a 206), so the
        // file's SHA-256 is wrong, the store keeps nothing of it, and the next sync starts over.
        let other = work.appending(path: "other")
        _ = try Harness.python(cut, [feed, other.appending(path: "downloads").path, "1"])
        let refused = try Harness.galley(["sync", feed, "--store", other.path, "--events", "json"])
        #expect(refused.status != 0)
        let failed = SyncCommandTests.events(refused.stdout).first { $0["event"] as? String == "downloadFailed" }
        #expect((failed?["error"] as? [String: Any])?["id"] as? String == "download.mismatch", "\(refused.stdout)")
        #expect(try SyncCommandTests.issues(other) == ["example-valid"])
        let retried = try Harness.galley(["sync", feed, "--store", other.path, "--json"])
        #expect(retried.status == 0, "\(retried.stdout)\(retried.stderr)")
        #expect(try SyncCommandTests.issues(other) == ["com.example.harbour.2026-01", "example-valid"])
    }
}
