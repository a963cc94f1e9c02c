import Foundation
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

    @Test func aBucketOrAnEmptyFolderIsAUsageError() throws {
        for to in ["s3://bucket/prefix", ""] {
            let result = try Harness.galley(["publish", "--store", "nowhere", "--to", to])
            #expect(result.status == 2, "\(to): \(result.stderr)")
        }
    }
}
