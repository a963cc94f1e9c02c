import Foundation
import Testing
@testable import GalleyKit

@Suite struct PackerTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Examples/winter-2026")

    func outputFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appending(path: "galley-unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func anIssueOverTheZipLimitsIsRefusedUnlessZip64IsAllowed() throws {
        let out = try outputFolder()
        var options = PackOptions(source: Self.example, output: out)
        options.limits = ZipLimits(maxEntries: 5, maxBytes: 0xFFFF_FFFF)
        #expect {
            try Packer().pack(options)
        } throws: { error in
            (error as? DiagnosticsError)?.diagnostics.map(\.id) == ["pack.zip64-required"]
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)

        options.limits = ZipLimits(maxEntries: 65_535, maxBytes: 100_000)
        #expect(throws: DiagnosticsError.self) { try Packer().pack(options) }

        options.allowZip64 = true
        let summary = try Packer().pack(options)
        #expect(summary.entries == 12)
    }

    @Test func progressReachesTheTotal() throws {
        var last: PackProgress?
        _ = try Packer().pack(PackOptions(source: Self.example, output: try outputFolder())) { last = $0 }
        let final = try #require(last)
        #expect(final.bytesDone == final.bytesTotal)
        #expect(final.entriesDone == final.entriesTotal)
        #expect(final.entriesTotal == 12)
    }

    @Test func articleIDsSurviveReorderingAndRenumbering() throws {
        let copy = try outputFolder().appending(path: "issue")
        try FileManager.default.copyItem(at: Self.example, to: copy)
        let before = try #require(try IssueSourceLoader().load(copy).source)
        let planBefore = try #require(PackPlanner().plan(before, sourceDateEpoch: nil).plan)
        try FileManager.default.moveItem(
            at: copy.appending(path: "articles/01-the-lighthouse-keepers"),
            to: copy.appending(path: "articles/09-the-lighthouse-keepers"))
        let after = try #require(try IssueSourceLoader().load(copy).source)
        let planAfter = try #require(PackPlanner().plan(after, sourceDateEpoch: nil).plan)
        let idsBefore = Dictionary(uniqueKeysWithValues: planBefore.articles.map { ($0.source.slug, $0.record.globalID) })
        let idsAfter = Dictionary(uniqueKeysWithValues: planAfter.articles.map { ($0.source.slug, $0.record.globalID) })
        #expect(idsBefore == idsAfter)
        #expect(planAfter.articles.last?.source.slug == "the-lighthouse-keepers")
        let assetsBefore = planBefore.articles.flatMap { $0.record.assets.map(\.id) }.sorted()
        let assetsAfter = planAfter.articles.flatMap { $0.record.assets.map(\.id) }.sorted()
        #expect(assetsBefore == assetsAfter)
    }
}
