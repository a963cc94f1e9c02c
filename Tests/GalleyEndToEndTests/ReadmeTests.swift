import Foundation
import Testing

/// The README's tour and the docs run as written: every line of their `sh` blocks, in order, in
/// a copy of the repository's example, with the built `galley` first on the PATH and a store of
/// its own. Synopses with placeholders (`ID`, `[--issue ID]`) live in plain ``` blocks.
@Suite struct ReadmeTests {
    /// The shell lines of the `sh` blocks between `## A tour` and the next `## ` heading.
    static func tourLines() throws -> [String] {
        try shellLines(Harness.root.appending(path: "README.md"), section: "## A tour")
    }

    /// The lines of `file`'s `sh` blocks, only under the heading `section` when given.
    static func shellLines(_ file: URL, section: String? = nil) throws -> [String] {
        let text = try String(contentsOf: file, encoding: .utf8)
        var lines: [String] = []
        var inTour = section == nil, inBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let section, line.hasPrefix("## ") { inTour = line == section }
            guard inTour else { continue }
            if line.hasPrefix("```") {
                inBlock = line == "```sh"
                continue
            }
            if inBlock, !line.trimmingCharacters(in: .whitespaces).isEmpty { lines.append(String(line)) }
        }
        return lines
    }

    /// Runs each line with bash in `work`; every one must exit 0. No `GALLEY_STORE` is set,
    /// and the default store's place (`XDG_DATA_HOME`) is `work/default-store-home`, which
    /// `expectNoDefaultStore` then finds empty: a line that names no store would write one
    /// the next line does not read.
    static func runLines(_ lines: [String], in work: URL, from file: String) throws {
        let path = Harness.galley.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        for line in lines {
            let result = try Harness.run(URL(fileURLWithPath: "/bin/bash"), ["-c", "set -o pipefail; " + line],
                                         environment: ["PATH": path, "HOME": work.path,
                                                       "XDG_DATA_HOME": work.appending(path: "default-store-home").path], in: work)
            #expect(result.status == 0, "\(file): `\(line)` exited \(result.status): \(result.stderr.prefix(400))")
        }
    }

    @Test func theTourRunsAsWritten() throws {
        let lines = try Self.tourLines()
        #expect(lines.count >= 10, "the tour has its commands")
        let work = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.copyItem(at: Harness.root.appending(path: "Examples"), to: work.appending(path: "Examples"))
        try Self.runLines(lines, in: work, from: "README.md")
        #expect(!FileManager.default.fileExists(atPath: work.appending(path: "default-store-home/galley").path),
                "a tour line wrote the default store instead of the tour's own")
        // What the tour promises to leave behind.
        for made in ["dist/com.example.harbour.2026-01.zip", "build/preview/index.html", "build/night-ferry.html", "store/store.sqlite"] {
            #expect(FileManager.default.fileExists(atPath: work.appending(path: made).path), "\(made)")
        }
    }

    /// Every `sh` block of docs/*.md, after the tour (which makes dist/, build/ and the store),
    /// file by file in name order.
    @Test func theDocsRunAsWritten() throws {
        let work = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.copyItem(at: Harness.root.appending(path: "Examples"), to: work.appending(path: "Examples"))
        try Self.runLines(try Self.tourLines(), in: work, from: "README.md")
        let docs = Harness.root.appending(path: "docs")
        var ran = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: docs.path).filter({ $0.hasSuffix(".md") }).sorted() {
            let lines = try Self.shellLines(docs.appending(path: name))
            try Self.runLines(lines, in: work, from: "docs/\(name)")
            ran += lines.count
        }
        #expect(ran >= 25, "the docs' examples ran (\(ran) lines)")
        #expect(!FileManager.default.fileExists(atPath: work.appending(path: "default-store-home/galley").path),
                "a docs line wrote the default store instead of naming one")
    }

    @Test func outputFoldersAreMadeAsNeededAndTakenAwayWhenTheWorkFails() throws {
        let work = try Harness.temporaryDirectory()
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", "a/b/"], in: work).status == 0)
        #expect(FileManager.default.fileExists(atPath: work.appending(path: "a/b/com.example.harbour.2026-01.zip").path))
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", "c/d/issue.zip"], in: work).status == 0)
        #expect(try Harness.galley(["render", Harness.example.path, "-o", "e/f/site"], in: work).status == 0)
        #expect(FileManager.default.fileExists(atPath: work.appending(path: "e/f/site/index.html").path))

        // A pack or render that fails leaves no folder it made.
        let failing = Harness.fixtures.appending(path: "sources/svg-script-error").path
        #expect(try Harness.galley(["pack", failing, "-o", "x/y/"], in: work).status == 1)
        let zip = work.appending(path: "a/b/com.example.harbour.2026-01.zip").path
        #expect(try Harness.galley(["render", zip, "--article", "nope", "-o", "p/q/a.html"], in: work).status == 2)
        #expect(!FileManager.default.fileExists(atPath: work.appending(path: "x").path))
        #expect(!FileManager.default.fileExists(atPath: work.appending(path: "p").path))
        // A file where a folder should be is said in words.
        try Data("x".utf8).write(to: work.appending(path: "file"))
        let blocked = try Harness.galley(["pack", Harness.example.path, "-o", "file/dist/"], in: work)
        #expect(blocked.status == 2)
        #expect(blocked.stderr.contains("a part of the path is a file, not a folder"), "\(blocked.stderr)")
    }
}
