import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyFormats

/// The one reader of latest.json: one callback per article with the issue's members read so
/// far, the issue's own members kept, and every way it fails located.
@Suite struct ManifestStreamTests {
    static let text = """
        {"global_id": "g1", "title": "T",
         "articles": [{"global_id": "a1", "title": "One"},
                      {"global_id": "a2", "title": "Two"}],
         "apple_id": "com.x.1"}
        """

    /// A source that hands over `text` a few bytes at a time, as a zip entry does.
    static func chunked(_ text: String, size: Int) -> () throws -> [UInt8]? {
        var rest = Array(text.utf8)[...]
        return {
            guard !rest.isEmpty else { return nil }
            defer { rest = rest.dropFirst(size) }
            return Array(rest.prefix(size))
        }
    }

    @Test(arguments: [1, 3, 4096])
    func articlesArriveOneByOneWithTheMembersBeforeThem(chunk: Int) throws {
        var reader = ManifestStream(chunks: Self.chunked(Self.text, size: chunk))
        var seen: [(Int, String, [String])] = []
        let issue = try reader.read { index, node, members in
            seen.append((index, node["global_id"]?.string ?? "", members.map(\.key)))
        }
        #expect(seen.map(\.0) == [0, 1])
        #expect(seen.map(\.1) == ["a1", "a2"])
        #expect(seen[0].2 == ["global_id", "title"])
        #expect(issue.members.map(\.key) == ["global_id", "title", "articles", "apple_id"])
        #expect(issue.articlesStreamed && issue.articleCount == 2)
        #expect(issue.record.appleID == "com.x.1" && issue.record.globalID == "g1")
    }

    @Test func aSyntaxErrorCarriesItsLineAndColumn() {
        var reader = ManifestStream(text: "{\"a\": 1,\n \"b\": }")
        #expect {
            try reader.read()
        } throws: { error in
            guard case ManifestStream.Failure.syntax(let parse)? = error as? ManifestStream.Failure else { return false }
            return parse.line == 2 && parse.column == 7
        }
    }

    @Test func aByteOrderMarkAndANonObjectAreTheirOwnFailures() {
        var bom = ManifestStream(text: "\u{FEFF}{}")
        #expect(throws: ManifestStream.Failure.self) { try bom.read() }
        do {
            var list = ManifestStream(text: "[1, 2]")
            _ = try list.read()
            Issue.record("a list was read as an issue")
        } catch ManifestStream.Failure.notAnObject(let value) {
            #expect(value.typeName == "an array")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func aFailingSourceIsASourceFailureNotASyntaxError() {
        struct Broken: Error {}
        var first = true
        var reader = ManifestStream(chunks: {
            if first { first = false; return Array("{\"articles\": [".utf8) }
            throw Broken()
        })
        do {
            _ = try reader.read()
            Issue.record("a broken source was read")
        } catch ManifestStream.Failure.source {
            #expect(reader.sourceError is Broken)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// The head: the issue's own fields before the first article, nothing read past it (a
    /// broken tail is not seen); fields after the articles are not in it; without articles,
    /// the whole document.
    @Test func theHeadIsTheIssueFieldsBeforeTheFirstArticle() throws {
        var first = ManifestStream(text: #"{"global_id": "g1", "last_updated": "2026-01-02T00:00:00Z", "articles": [{"title": "t"}, !!broken"#)
        let head = try first.readHead().record
        #expect(head.globalID == "g1")
        #expect(head.lastUpdated == "2026-01-02T00:00:00Z")
        var late = ManifestStream(text: #"{"articles": [{"title": "t"}], "last_updated": "2026-01-02T00:00:00Z"}"#)
        #expect(try late.readHead().record.lastUpdated == "")
        var none = ManifestStream(text: #"{"articles": [], "apple_id": "a"}"#)
        #expect(try none.readHead().record.appleID == "a")
        var broken = ManifestStream(text: #"{"global_id": "#)
        #expect(throws: ManifestStream.Failure.self) { try broken.readHead() }
    }

    @Test func errorsFromTheCallbackPassThrough() {
        struct Refused: Error {}
        var reader = ManifestStream(text: Self.text)
        #expect(throws: Refused.self) { try reader.read { _, _, _ in throw Refused() } }
    }

    @Test func aFileIsReadAndAMissingOneSaysSo() throws {
        let url = Scratch.path("manifest", suffix: ".json")
        try Data(Self.text.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(try ManifestStream.issue(url, display: "x").title == "T")
        var titles: [String] = []
        try ManifestStream.articles(url, display: "x", issueGlobalID: "g1") { titles.append($0.title) }
        #expect(titles == ["One", "Two"])
        #expect(throws: GalleyError.self) { try ManifestStream(file: url.appending(path: "missing")) }
    }

    @Test func keysGivenTwiceAreFoundAtEveryDepthAndInLargeObjects() throws {
        let wide = (0..<40).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        let text = """
            {"a": 1, "articles": [{"images": {"ordered": [{"file_name": "x", "file_name": "y"}]}}],
             "m": {\(wide), "k7": 0}, "a": 2}
            """
        var reader = ManifestStream(text: text)
        _ = try reader.read()
        #expect(reader.duplicateKeys.map(\.key) == ["file_name", "k7", "a"])
        #expect(reader.duplicateKeys.map(\.line) == [1, 2, 2])
        #expect(reader.duplicateKeyCount == 3)
        var clean = ManifestStream(text: Self.text)
        _ = try clean.read()
        #expect(clean.duplicateKeys.isEmpty)
    }
}
