import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyStore
@testable import GalleySync

/// The feed's reading and the download folder's rules, without a server (the end-to-end tests
/// run sync against real ones).
@Suite struct FeedTests {
    let base = URL(string: "http://127.0.0.1:8080/feed")!

    func feed(_ json: String) throws -> Feed {
        try Feed(try JSONValue.parse(json), base: base)
    }

    func refusal(_ json: String) -> String? {
        do {
            _ = try feed(json)
            return nil
        } catch let error as GalleyError {
            #expect(error.id == .feedInvalid)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func aPackageFeedIsReadWithRelativeAddressesResolved() throws {
        let sha = String(repeating: "ab", count: 32)
        let read = try feed(#"{"revision": 4, "packages": [{"apple_id": "a.b", "version": 2, "file_path": "/files/a.zip", "size": 10, "sha256": "\#(sha.uppercased())"}]}"#)
        #expect(read.revision == 4 && !read.single)
        let package = try #require(read.packages.first)
        #expect(package.url.absoluteString == "http://127.0.0.1:8080/files/a.zip")
        #expect(package.sha256 == sha, "lowercased")
        #expect(package.size == 10 && package.appleID == "a.b")
    }

    @Test func aDrupalStyleSinglePackageIsItsOwnRevision() throws {
        let read = try feed(#"{"version": 9, "file_path": "https://cdn.example/issue.zip"}"#)
        #expect(read.single && read.revision == 9 && read.packages.count == 1)
    }

    /// Each refusal names the JSON path of what is wrong.
    @Test func aFeedThatLiesIsRefusedNamingWhere() {
        let sha = String(repeating: "0", count: 64)
        let cases: [(String, String)] = [
            (#"{"packages": {}, "revision": 1}"#, "/packages is not an array"),
            (#"{"packages": [], "revision": "1"}"#, "/revision is not a whole number"),
            (#"{"packages": [1], "revision": 1}"#, "/packages/0 is not an object"),
            (#"{"packages": [{"version": 1, "file_path": "file:///etc/passwd", "apple_id": "a", "size": 1, "sha256": "\#(sha)"}], "revision": 1}"#,
             "/packages/0/file_path is not an http(s) address"),
            (#"{"packages": [{"version": -1, "file_path": "/a.zip"}], "revision": 1}"#, "/packages/0/version is not a whole number"),
            (#"{"packages": [{"version": 1, "file_path": "/a.zip", "sha256": "xyz"}], "revision": 1}"#, "sha256 is not 64 hex digits"),
            (#"{"packages": [{"version": 1, "file_path": "/a.zip"}], "revision": 1}"#, "/packages/0 needs apple_id, size and sha256"),
            (#"{"packages": [{"version": 1, "file_path": "/a.zip", "apple_id": "", "size": 1, "sha256": "\#(sha)"}], "revision": 1}"#,
             "apple_id is empty or too long"),
        ]
        for (json, words) in cases {
            let message = refusal(json)
            #expect(message?.contains(words) == true, "\(json): \(message ?? "accepted")")
        }
    }

    /// A static feed's detached signature is beside it, its query kept.
    @Test func theDetachedSignatureIsBesideTheFeed() throws {
        let cases = [
            ("http://127.0.0.1:8080/site/feed.json", "http://127.0.0.1:8080/site/feed.json.sig"),
            ("https://cdn.example.com/feed.json?v=2", "https://cdn.example.com/feed.json.sig?v=2"),
            ("https://cdn.example.com/a%20b/feed.json#top", "https://cdn.example.com/a%20b/feed.json.sig"),
        ]
        for (feed, signature) in cases {
            #expect(FeedSyncer.detachedSignatureAddress(try #require(URL(string: feed))) == signature)
        }
    }

    @Test func retryAfterIsSecondsOrAnHTTPDate() {
        #expect(FeedSyncer.retryAfter("120") == 120)
        #expect(FeedSyncer.retryAfter(" 0 ") == 0)
        #expect(FeedSyncer.retryAfter("-5") == nil)
        #expect(FeedSyncer.retryAfter("soon") == nil)
        #expect(FeedSyncer.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT") == 0, "a date in the past waits no time")
        let later = FeedSyncer.retryAfter("Fri, 01 Jan 2100 00:00:00 GMT") ?? 0
        #expect(later > 1_000_000)
    }

    /// A download is named by its content when the feed gives its SHA-256, so a resumed one is
    /// the same file; otherwise by version and a name safe for any file system.
    @Test func downloadsAreNamedByContent() {
        let sha = String(repeating: "c", count: 64)
        let url = URL(string: "http://127.0.0.1/a.zip")!
        #expect(FeedSyncer.downloadName(.init(appleID: "x", version: 1, url: url, size: 1, sha256: sha)) == sha + ".zip")
        let unnamed = FeedSyncer.downloadName(.init(appleID: "../../etc/" + String(repeating: "é", count: 200), version: 3, url: url))
        #expect(unnamed.hasPrefix("v3-") && !unnamed.contains("/") && unnamed.utf8.count <= 110, "\(unnamed)")
    }

    /// Abandoned `.partial` downloads go after a day; the feed's own, fresh ones and whole
    /// downloads are kept by that rule (whole ones have a rule of their own).
    @Test func abandonedPartialDownloadsAreRemovedAfterADay() throws {
        let folder = try Scratch.folder("galley-sync-downloads")
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["old.zip.partial", "kept.zip.partial", "fresh.zip.partial", "whole.zip"] {
            try Data("x".utf8).write(to: folder.appending(path: name))
        }
        let now = Date().addingTimeInterval(Double(FeedSyncer.abandonedDownloadAge) + 60)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 120)],
                                              ofItemAtPath: folder.appending(path: "fresh.zip.partial").path)
        FeedSyncer.removeAbandonedDownloads(in: folder.path, keeping: ["kept.zip.partial"], now: now)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(left == ["kept.zip.partial", "fresh.zip.partial", "whole.zip"])
        FeedSyncer.removeFinishedDownloads(in: folder.path)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)) == ["kept.zip.partial", "fresh.zip.partial"])
    }
}
