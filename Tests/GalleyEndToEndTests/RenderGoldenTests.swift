import Foundation
import Testing

/// Golden files: every article body of the example issue in each style, and a page, rendered
/// from the packed zip and compared byte for byte with Tests/Fixtures/golden. Regenerate after
/// an intended change with `GALLEY_UPDATE_GOLDEN=1 swift test --filter RenderGoldenTests`.
@Suite(.serialized) struct RenderGoldenTests {
    static let articles = [
        ("the-lighthouse-keepers", "fbf92e3a2aa69e50f4c7b6e7"), ("night-ferry", "5f827f80262d6fe87d41ca17"),
        ("harbour-in-motion", "beaab94ed7c774d7b2887818"), ("letters", "696607440a73d36e251ac53f"),
    ]

    func zip() throws -> URL {
        let out = try Harness.temporaryDirectory()
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", out.path]).status == 0)
        return out.appending(path: "com.example.harbour.2026-01.zip")
    }

    func compare(_ rendered: String, golden name: String) throws {
        let url = Harness.fixtures.appending(path: "golden/\(name)")
        if ProcessInfo.processInfo.environment["GALLEY_UPDATE_GOLDEN"] != nil {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(rendered.utf8).write(to: url)
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(rendered == expected, "\(name) differs from its golden file")
    }

    @Test(arguments: ["semantic", "dumpling"])
    func everyArticleInEachStyle(style: String) throws {
        let zip = try zip()
        for (slug, id) in Self.articles {
            let result = try Harness.galley([
                "render", zip.path, "--article", id, "--style", style, "--asset-base", "https://cdn.example.com/2026-01/",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            try compare(result.stdout, golden: "\(style)/\(slug).html")
        }
    }

    @Test func aPage() throws {
        let result = try Harness.galley(["render", try zip().path, "--article", Self.articles[1].1, "--page"])
        #expect(result.status == 0)
        try compare(result.stdout, golden: "page/night-ferry.html")
    }
}
