import Foundation
import Testing

/// Every command's output on the example issue, in the order a producer runs them (pack, check,
/// import, query, render a site), compared with Tests/Fixtures/golden/commands: what scripts
/// read must not change by accident. The working folder's path is written as `WORK`.
/// Regenerate after an intended change with
/// `GALLEY_UPDATE_GOLDEN=1 swift test --filter CommandGoldenTests`, and say why in the commit.
@Suite(.serialized) struct CommandGoldenTests {
    static let issue = "com.example.harbour.2026-01"
    static let article = "fbf92e3a2aa69e50f4c7b6e7"

    /// Name and arguments, run in order in one working folder holding a copy of the example.
    static let steps: [(String, [String])] = [
        ("pack", ["pack", "winter-2026", "-o", "WORK/dist", "--json"]),
        ("pack-text", ["pack", "winter-2026", "-o", "WORK/dist2.zip"]),
        ("validate-src", ["validate", "winter-2026", "--format", "json"]),
        ("validate-zip", ["validate", "dist/\(issue).zip", "--format", "json"]),
        ("validate-text", ["validate", "winter-2026", "dist/\(issue).zip"]),
        ("validate-github", ["validate", "winter-2026", "--format", "github"]),
        ("validate-junit", ["validate", "winter-2026", "--format", "junit"]),
        ("validate-sarif", ["validate", "winter-2026", "--format", "sarif"]),
        ("import", ["import", "dist/\(issue).zip", "--store", "store", "--json"]),
        ("import-again", ["import", "dist/\(issue).zip", "--store", "store", "--json"]),
        ("issues", ["issues", "--store", "store", "--json"]),
        ("issues-text", ["issues", "--store", "store"]),
        ("issue-show", ["issue", "show", issue, "--store", "store", "--json"]),
        ("articles", ["articles", "--store", "store", "--json"]),
        ("articles-featured", ["articles", "--featured", "--store", "store", "--json"]),
        ("article-show", ["article", "show", article, "--store", "store", "--json"]),
        ("assets", ["assets", "--issue", issue, "--store", "store", "--json"]),
        ("search", ["search", "harbour", "--store", "store", "--json"]),
        ("store-check", ["store", "check", "--store", "store", "--json"]),
        ("store-gc", ["store", "gc", "--store", "store", "--json"]),
        ("render-site", ["render", "dist/\(issue).zip", "-o", "WORK/site", "--json"]),
    ]

    @Test func everyCommandPrintsWhatItPrintedBefore() throws {
        let work = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.copyItem(at: Harness.example, to: work.appending(path: "winter-2026"))
        try FileManager.default.createDirectory(at: work.appending(path: "dist"), withIntermediateDirectories: true)
        let folder = Harness.fixtures.appending(path: "golden/commands")
        let update = ProcessInfo.processInfo.environment["GALLEY_UPDATE_GOLDEN"] != nil
        if update { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        for (name, arguments) in Self.steps {
            let result = try Harness.galley(arguments.map { $0.replacingOccurrences(of: "WORK", with: work.path) }, in: work)
            // The store's folder for an issue ends in a random token (`<apple_id>.<pid>-<random>`).
            let text = (result.stdout + "exit \(result.status)\n").replacingOccurrences(of: work.path, with: "WORK")
                .replacing(/\.[0-9]+-[0-9]+\//, with: ".TOKEN/")
            let url = folder.appending(path: "\(name).txt")
            if update { try Data(text.utf8).write(to: url) }
            let expected = try String(contentsOf: url, encoding: .utf8)
            #expect(text == expected, "`galley \(arguments.joined(separator: " "))` printed something else than golden/commands/\(name).txt")
        }
    }
}
