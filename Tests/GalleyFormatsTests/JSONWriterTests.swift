import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyFormats

@Suite struct JSONWriterTests {
    @Test func keepsKeyOrderAndLeavesSlashesAlone() {
        let value = JSONValue.object([("b", .int(1)), ("a", .string("x/y")), ("c", .array([.bool(true), .null]))])
        #expect(JSONWriter(pretty: false).encode(value) == #"{"b":1,"a":"x/y","c":[true,null]}"#)
    }

    @Test func escapesWhatJSONAndJavaScriptNeed() {
        let text = "quote \" backslash \\ newline \n tab \t bell \u{07} line-sep \u{2028} é 😀"
        let encoded = JSONWriter(pretty: false).encode(.string(text))
        #expect(encoded == #""quote \" backslash \\ newline \n tab \t bell \u0007 line-sep \u2028 é 😀""#)
        // Round trip through Foundation's parser.
        let decoded = try? JSONSerialization.jsonObject(with: Data(encoded.utf8), options: .fragmentsAllowed) as? String
        #expect(decoded == text)
    }

    @Test func prettyOutputIsIndentedByTwoSpaces() {
        let value = JSONValue.object([("list", .array([.int(1)])), ("empty", .object([]))])
        #expect(JSONWriter().encode(value) == "{\n  \"list\": [\n    1\n  ],\n  \"empty\": {}\n}")
    }

    @Test func theStreamingManifestWriterWritesTheSameBytesAsTheWholeDocument() throws {
        var issue = IssueRecord(
            globalID: "aaaaaaaaaaaaaaaaaaaaaaaa", appleID: "org.example.x", title: "T",
            lastUpdated: "2020-01-01T00:00:00.000+0000", displayDate: "January 2020", publishDate: "01/01/2020")
        issue.images = [AssetRecord(id: "c", kind: .image, fileName: "c.jpg", crop350: "c.jpg")]
        var first = ArticleRecord(globalID: "a1", title: "One", body: "<p>x</p>\n", dateLastUpdated: "d1")
        first.featured = true
        first.sounds = [AssetRecord(id: "s", kind: .sound, caption: "c", source: "s", fileName: "s.mp3", crop350: "s.mp3")]
        let second = ArticleRecord(globalID: "a2", title: "Two", body: "", dateLastUpdated: "d2")
        for articles in [[], [first], [first, second]] {
            var chunks: [[UInt8]] = []
            let writer = ManifestWriter(issue: issue) { chunks.append($0) }
            for article in articles { try writer.append(article) }
            try writer.finish()
            let written = String(decoding: chunks.joined(), as: UTF8.self)
            #expect(written == ManifestEncoder.document(issue, articles: articles))
            #expect(writer.bytesWritten == Int64(written.utf8.count))
        }
    }
}

@Suite struct ManifestEncoderTests {
    /// Wire format §2.3: the article keys Dumpling force-casts, with their JSON types.
    @Test func everyArticleKeyDumplingForceCastsIsPresentWithItsType() throws {
        var article = ArticleRecord(globalID: "a", title: "T", body: "B", dateLastUpdated: "2020-01-01T00:00:00.000+0000")
        article.customMeta = .object([("k", .string("v"))])
        let text = JSONWriter().encode(ManifestEncoder.json(article, issueGlobalID: "i"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        for key in ["global_id", "title", "body", "description", "url", "section", "author_name", "source", "dek",
                    "author_url", "author_bio", "keywords", "commentary", "type", "date_last_updated"] {
            #expect(json[key] is String, "\(key) must be a string")
        }
        for key in ["meta", "customMeta", "metadata", "images", "sound_files"] {
            #expect(json[key] is [String: Any], "\(key) must be an object")
        }
        #expect((json["images"] as? [String: Any])?["ordered"] is [Any])
        #expect(json["featured"] == nil)
        #expect(json["videos"] == nil, "no empty extension list")
        #expect(json["sku"] == nil)
        #expect((json["meta"] as? [String: Any])?["published"] as? Bool == true)
    }

    @Test func featuredIsKeyedByTheIssueID() throws {
        var article = ArticleRecord(globalID: "a", title: "T", body: "", dateLastUpdated: "")
        article.featured = true
        let value = ManifestEncoder.json(article, issueGlobalID: "issue-id")
        #expect(value["featured"] == .object([("issue-id", .int(1))]))
    }

    @Test func anAssetHasItsMandatoryStrings() {
        let asset = AssetRecord(id: "x", kind: .image, caption: "c", source: "s", fileName: "f.jpg", crop350: "t.jpg")
        let value = ManifestEncoder.json(asset)
        #expect(value["id"] == .string("x"))
        #expect(value["caption"] == .string("c"))
        #expect(value["source"] == .string("s"))
        #expect(value["file_name"] == .string("f.jpg"))
        #expect(value["crop_350_350"] == .string("t.jpg"))
        #expect(value["metadata"] == nil)
    }
}

@Suite struct GlobalIDTests {
    @Test func derivedIDsAre24HexDigitsAndStable() {
        let a = GlobalID.article(appleID: "org.example.issue", slug: "band")
        #expect(a.count == 24)
        #expect(a.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(a == GlobalID.article(appleID: "org.example.issue", slug: "band"))
    }

    @Test func idsDependOnTheIssueKindAndPath() {
        let ids = [
            GlobalID.issue(appleID: "a"), GlobalID.issue(appleID: "b"),
            GlobalID.article(appleID: "a", slug: "x"), GlobalID.article(appleID: "a", slug: "y"),
            GlobalID.asset(appleID: "a", owner: "x", key: "p.jpg"), GlobalID.asset(appleID: "a", owner: "", key: "p.jpg"),
            GlobalID.asset(appleID: "b", owner: "x", key: "p.jpg"),
        ]
        #expect(Set(ids).count == ids.count)
    }

    @Test(arguments: ["", "it's", "50%", "back\\slash", "two words", "tab\t", "quote\"", "line\nfeed", "v\u{0B}tab", "form\u{0C}feed",
                      "cr\r", "nbsp\u{00A0}", "em\u{2003}space", "nel\u{0085}", "del\u{7F}", "nul\u{0}",
                      String(repeating: "a", count: 129), String(repeating: "é", count: 129)])
    func unsafeIDsAreRefused(id: String) {
        #expect(GlobalID.problem(with: id) != nil)
    }

    @Test(arguments: ["54a5c0e1b1a2c3d4e5f60001", "log-book", "photo.jpg", "A_1", "café-東京",
                      String(repeating: "a", count: 128), String(repeating: "é", count: 128), String(repeating: "e\u{301}", count: 128)])
    func safeIDsAreAccepted(id: String) {
        #expect(GlobalID.problem(with: id) == nil)
    }
}
