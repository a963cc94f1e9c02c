import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit

@Suite struct PackerTests {
    init() { ProcessEnvironment.configureForArchives() }

    static let example = TestFiles.example

    func outputFolder() throws -> URL {
        let url = Scratch.path("galley-unit")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func anIssueOverTheZipLimitsIsRefusedUnlessZip64IsAllowed() throws {
        let out = try outputFolder()
        var options = PackOptions(source: Self.example, output: out)
        /// The message of the one finding a pack within `limits` is refused with (checked to be
        /// `pack.zip64-required`); the pack left nothing behind.
        func refusal(_ limits: ZipLimits) throws -> String {
            options.limits = limits
            var message = ""
            #expect {
                try Packer().pack(options)
            } throws: { error in
                let diagnostics = (error as? DiagnosticsError)?.diagnostics ?? []
                message = diagnostics.first?.message ?? ""
                return diagnostics.map(\.id) == [Check.packZip64Required.id]
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty, "nothing left of the zip or its work folder")
            return message
        }
        // Too many entries, or bytes: both known once latest.json is written (some 20 KB here).
        #expect(try refusal(ZipLimits(maxEntries: 5, maxBytes: 0xFFFF_FFFF)).contains("entries"))
        #expect(try refusal(ZipLimits(maxEntries: 65_535, maxBytes: 100_000)).contains("about"))
        // latest.json itself too large, found as it streams (2,000 bytes stand in for 4 GiB;
        // the example's media alone are more, and pack stops on those first).
        #expect(try refusal(ZipLimits(maxEntries: 65_535, maxBytes: 2_000)).contains("about"))
        let wordy = try outputFolder().appending(path: "wordy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: wordy.appending(path: "articles/01-words"), withIntermediateDirectories: true)
        try Data("title: Wordy\napple_id: org.example.wordy\npublish_date: 2026-01-01\n".utf8).write(to: wordy.appending(path: "issue.yaml"))
        try Data("---\ntitle: Words\n---\n\(String(repeating: "Many words, all different: \(UUID().uuidString). ", count: 60))\n".utf8)
            .write(to: wordy.appending(path: "articles/01-words/article.md"))
        var text = PackOptions(source: wordy, output: out)
        text.limits = ZipLimits(maxEntries: 65_535, maxBytes: 2_000)
        #expect {
            try Packer().pack(text)
        } throws: { error in
            let refused = (error as? DiagnosticsError)?.diagnostics.filter { $0.severity == .error } ?? []
            return refused.map(\.id) == [Check.packZip64Required.id] && refused[0].message.contains("latest.json is over 2000 bytes")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)

        options.allowZip64 = true
        let summary = try Packer().pack(options)
        #expect(summary.entries == 17, "12 files, latest.json and 5 thumbnails made")
        // An issue that needs no Zip64 gets none because the option was given (latest.json,
        // streamed into the zip otherwise, is added with its size known).
        #expect(try ZipDirectory.read(path: summary.path, maxEntries: 100).hasZip64Records == false)
    }

    /// Pack stops as soon as the articles planned so far need Zip64, not after making every
    /// article's thumbnails (30,000 articles of two pictures were eight minutes of libvips for
    /// a refusal). 100 articles of a picture each, read 32 at a time: the first 64 are 65
    /// entries, past 40, without thumbnails; with them, the folder holds enough files to need
    /// Zip64, so its files are counted before any thumbnail is made, and that count refuses
    /// the pack (it used to make the first 32 articles' thumbnails to find 64 entries).
    @Test func aPackOverTheEntriesStopsWithTheFirstArticlesOver() throws {
        let source = try outputFolder().appending(path: "many-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: source.appending(path: "articles"), withIntermediateDirectories: true)
        try Data("title: Many\napple_id: org.example.many\npublish_date: 2026-01-01\n".utf8)
            .write(to: source.appending(path: "issue.yaml"))
        let picture = try Data(contentsOf: Self.example.appending(path: "articles/03-harbour-in-motion/harbour-poster.jpg"))
        for index in 1...100 {
            let folder = source.appending(path: "articles/\(String(format: "%03d", index))-a\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("---\ntitle: Article \(index)\nassets:\n  - file: p.jpg\n---\n<!-- [ASSET: p.jpg] -->\n".utf8)
                .write(to: folder.appending(path: "article.md"))
            try picture.write(to: folder.appending(path: "p.jpg"))
        }
        let out = try outputFolder().appending(path: "out-\(UUID().uuidString)")
        var options = PackOptions(source: source, output: out)
        options.limits = ZipLimits(maxEntries: 40, maxBytes: 0xFFFF_FFFF)
        func refusal() -> (diagnostic: Diagnostic?, articlesWritten: Int, articlesCounted: Int) {
            var written = 0, counted = 0
            func got(_ state: PackProgress) {
                switch state.phase {
                case .counting: counted = max(counted, state.articlesDone)
                case .articles: written = max(written, state.articlesDone)
                case .zip: break
                }
            }
            do {
                _ = try Packer().pack(options, progress: got)
                return (nil, written, counted)
            } catch {
                let diagnostics = (error as? DiagnosticsError)?.diagnostics ?? []
                #expect(diagnostics.map(\.id) == [Check.packZip64Required.id], "\(error)")
                return (diagnostics.last, written, counted)
            }
        }
        let made = refusal()
        #expect(made.articlesWritten == 0, "stopped before the first batch went into latest.json")
        #expect(made.articlesCounted == 32, "stopped counting with the articles over")
        #expect(made.diagnostic?.message.contains("at least 65 entries") == true, "\(String(describing: made.diagnostic))")
        #expect(made.diagnostic?.message.contains("counted in the first 64 of its 100 articles") == true)
        #expect(made.diagnostic?.hint?.contains("thumbnails") == false, "no thumbnail was made")
        // Files alone within the limit (101 entries), with a thumbnail each over it: the pack
        // stops at its first batch, whose 32 thumbnails and the whole issue's files are over
        // (before, at its second, counting only the first 64 articles' files and thumbnails).
        options.limits = ZipLimits(maxEntries: 120, maxBytes: 0xFFFF_FFFF)
        let whole = refusal()
        #expect(whole.articlesCounted == 100 && whole.articlesWritten == 0)
        #expect(whole.diagnostic?.message.contains(
            "at least 133 entries (the most a zip without Zip64 holds is 120), counted from all its articles' files and the 32 thumbnails made for the first 32 of its 100 articles") == true,
                "\(String(describing: whole.diagnostic))")
        #expect(whole.diagnostic?.hint?.contains("32 of the entries are the thumbnails pack makes") == true)
        options.limits = ZipLimits(maxEntries: 40, maxBytes: 0xFFFF_FFFF)
        options.thumbnails = .none
        let plain = refusal()
        #expect(plain.articlesCounted == 0, "nothing to count first without thumbnails")
        #expect(plain.articlesWritten == 32)
        #expect(plain.diagnostic?.message.contains("at least 65 entries") == true, "\(String(describing: plain.diagnostic))")
        #expect(plain.diagnostic?.message.contains("counted in the first 64 of its 100 articles") == true)
        #expect(plain.diagnostic?.hint?.contains("thumbnails") == false)
        #expect(!FileManager.default.fileExists(atPath: out.path), "nothing left behind")
        // Within the limits, the same source packs.
        options.limits = ZipLimits(maxEntries: 101, maxBytes: 0xFFFF_FFFF)
        #expect(try Packer().pack(options).entries == 101)
    }

    /// `galley validate` of a source warns when the thumbnails pack makes by default could take
    /// its zip past the entry limit (pack would refuse it after making them): it counts each
    /// picture pack would make a thumbnail of once, on the example exactly the thumbnails pack
    /// makes (the cover and the sound have their own, the video's poster gets one), and says
    /// nothing when they fit, or when the files alone are over (`pack.zip64-required` then).
    @Test func validateOfASourceCountsTheThumbnailsPackWouldMake() throws {
        let out = try outputFolder()
        let with = try Packer().pack(PackOptions(source: Self.example, output: out.appending(path: "with-\(UUID().uuidString)"))).entries
        var plain = PackOptions(source: Self.example, output: out.appending(path: "without-\(UUID().uuidString)"))
        plain.thumbnails = .none
        let without = try Packer().pack(plain).entries
        #expect(with > without)
        func findings(_ limit: Int) throws -> [Diagnostic] {
            try Packer().check(Self.example, limits: ZipLimits(maxEntries: limit, maxBytes: ZipLimits.classic.maxBytes))
                .filter { $0.id == Check.packZip64WithThumbnails.id || $0.id == Check.packZip64Required.id }
        }
        #expect(try findings(with).isEmpty, "fits with every thumbnail")
        let over = try findings(with - 1)
        #expect(over.map(\.id) == [Check.packZip64WithThumbnails.id])
        #expect(over.first?.severity == .warning)
        #expect(over.first?.message.contains("each of its \(with - without) pictures") == true, "\(over)")
        #expect(over.first?.message.contains("up to \(with) entries (\(without) without;") == true, "\(over)")
        #expect(try findings(without - 1).map(\.id) == [Check.packZip64Required.id], "the files alone are over")
    }

    /// `--allow-zip64` packs past the container checks' limits where they are Zip64's (as
    /// their defaults are: 65,535 entries, 4 GiB). Here both are 10 entries, and the example is
    /// 17: without the option the finding is the one that names it, with it the issue packs; a
    /// limit configured below Zip64's still holds. (Before, `zip.entries` refused an issue over
    /// 65,535 files with `--allow-zip64` as without.)
    @Test func allowZip64PacksPastContainerLimitsThatAreZip64s() throws {
        let out = try outputFolder()
        var options = PackOptions(source: Self.example, output: out)
        options.limits = ZipLimits(maxEntries: 10, maxBytes: 0xFFFF_FFFF)
        options.configuration.limits.maxEntries = 10
        var hints: [String] = []
        func errors() -> [String] {
            do {
                _ = try Packer().pack(options)
                return []
            } catch let error as DiagnosticsError {
                let errors = error.diagnostics.filter { $0.severity == .error }
                hints = errors.map { $0.hint ?? "" }
                return errors.map(\.id.rawValue)
            } catch {
                return ["\(error)"]
            }
        }
        #expect(errors() == [Check.packZip64Required.id.rawValue])
        options.allowZip64 = true
        #expect(errors() == [])
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["com.example.harbour.2026-01.zip"])
        options.force = true
        options.configuration.limits.maxEntries = 9
        #expect(errors() == [Check.zipEntries.id.rawValue])
        #expect(hints.first?.contains("`max_entries` under `limits:` in .galley.yml") == true, "the hint names the limit set")
        // The same for bytes: a total size limit at Zip64's is lifted, one below it holds.
        options.configuration.limits.maxEntries = 65_535
        options.limits = ZipLimits(maxEntries: 65_535, maxBytes: 100_000)
        options.configuration.limits.maxTotalBytes = 100_000
        #expect(errors() == [])
        options.configuration.limits.maxTotalBytes = 99_999
        #expect(errors() == [Check.zipSize.id.rawValue])
        #expect(hints.first?.contains("`max_total_bytes` under `limits:` in .galley.yml") == true)
        options.allowZip64 = false
        options.configuration.limits.maxTotalBytes = 100_000
        #expect(errors() == [Check.packZip64Required.id.rawValue])

        let limits = Packer.packingLimits(ContainerLimits(), zip: .classic)
        #expect(limits.maxEntries == Int.max && limits.maxTotalBytes == .max, "the defaults are Zip64's limits")
    }

    /// `validate SOURCE` says what pack would: an issue over the entries a zip without Zip64
    /// holds is `pack.zip64-required`, not `zip.entries`.
    @Test func checkingASourceOverTheEntriesWithoutZip64FindsWhatPackWould() throws {
        var configuration = ValidationConfiguration()
        configuration.limits.maxEntries = 10
        let findings = try Packer().check(Self.example, configuration: configuration,
                                          limits: ZipLimits(maxEntries: 10, maxBytes: 0xFFFF_FFFF))
        #expect(findings.filter { $0.severity == .error }.map(\.id) == [Check.packZip64Required.id], "\(findings.map(\.message))")
    }

    /// `galley validate SOURCE` writes latest.json as pack does: one too large for a zip
    /// without Zip64 is the same finding, where pack stops, and nothing is left behind (in a
    /// folder of its own: other tests check sources at the same time).
    @Test func checkingASourceWhoseLatestJSONNeedsZip64FindsWhatPackWould() throws {
        let scratch = try outputFolder().appending(path: "check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
        let findings = try Packer().check(Self.example, limits: ZipLimits(maxEntries: 65_535, maxBytes: 2_000), temporaryFolder: scratch)
        let errors = findings.filter { $0.severity == .error }
        #expect(errors.map(\.id) == [Check.packZip64Required.id], "\(findings.map(\.message))")
        #expect(errors.first?.message.contains("latest.json is over 2000 bytes") == true)
        #expect(errors.first?.hint?.contains("--allow-zip64") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty, "the scratch zip is removed")
        // Within the limit, no such finding.
        #expect(try Packer().check(Self.example).allSatisfy { $0.id != Check.packZip64Required.id })
    }

    @Test func zip64RecordsInTheWrittenZipStopAPackOnlyWithoutAllowZip64() throws {
        // A zip with Zip64 records: an entry of unknown size written with Zip64 allowed.
        let path = Scratch.path("galley-zip64", suffix: ".zip").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try ZipWriter(url: URL(fileURLWithPath: path), hashing: false, allowZip64: true)
        try writer.beginEntry(name: "org.example/latest.json", mtime: 1_600_000_000, compression: .deflate)
        try Array("{}\n".utf8).withUnsafeBytes { try writer.write($0) }
        try writer.finishEntry()
        _ = try writer.finish()
        var written = Findings(configuration: ValidationConfiguration())
        ContainerChecks(path: path, limits: ValidationConfiguration().limits, packing: true)
            .run(try ZipDirectory.read(path: path, maxEntries: 10), zipFileName: "", into: &written)
        #expect(Packer.refusals(written, allowZip64: false).map(\.id) == [Check.zipZip64.id])
        #expect(Packer.refusals(written, allowZip64: true).isEmpty)
    }

    @Test func progressReachesTheTotal() throws {
        var last: PackProgress?
        var articleSteps: [Int] = []
        _ = try Packer().pack(PackOptions(source: Self.example, output: try outputFolder())) {
            if $0.phase == .articles { articleSteps.append($0.articlesDone) }
            last = $0
        }
        #expect(articleSteps == [1, 2, 3, 4])
        let final = try #require(last)
        #expect(final.phase == .zip)
        #expect(final.bytesDone == final.bytesTotal)
        #expect(final.entriesDone == final.entriesTotal)
        #expect(final.entriesTotal == 17)
    }

    /// Packs a copy of the example and runs `change` on its `file` once, when every article is
    /// planned (its size taken) and no media file is written yet. Returns the error the pack
    /// threw (nil when it did not), the changed file, and whether a zip was left in the output.
    func packChangingMidway(_ file: String, _ change: @escaping (URL) -> Void) throws -> (error: GalleyError?, target: URL, zipLeft: Bool) {
        let folder = try outputFolder()
        let copy = folder.appending(path: "issue")
        try FileManager.default.copyItem(at: Self.example, to: copy)
        var options = PackOptions(source: copy, output: folder.appending(path: "out"))
        options.thumbnails = .none
        let target = copy.appending(path: file)
        var changed = false
        var failure: GalleyError?
        do {
            _ = try Packer().pack(options) { progress in
                guard progress.phase == .articles, progress.articlesDone == progress.articlesTotal, !changed else { return }
                changed = true
                change(target)
            }
        } catch {
            failure = try #require(error as? GalleyError, "\(error)")
        }
        #expect(changed, "the file was changed midway")
        return (failure, target, FileManager.default.fileExists(atPath: folder.appending(path: "out/com.example.harbour.2026-01.zip").path))
    }

    @Test(arguments: [("masthead.png", 100), ("masthead.png", -100), ("articles/01-the-lighthouse-keepers/lamp-room.jpg", 9_000)])
    func aMediaFileThatChangesSizeBeforeTheZipIsWrittenStopsThePack(_ file: String, _ change: Int) throws {
        // Small files are read ahead whole, larger ones streamed: both ways see the change.
        let packed = try packChangingMidway(file) { target in
            var bytes = try! Data(contentsOf: target)
            if change > 0 { bytes += Data(repeating: 7, count: change) } else { bytes.removeLast(-change) }
            try! bytes.write(to: target)
        }
        let error = try #require(packed.error, "the pack stopped")
        #expect(error.message.hasPrefix("the file changed while it was being packed"))
        #expect(error.path == packed.target.path)
        #expect(!packed.zipLeft)
    }

    @Test(arguments: ["masthead.png", "articles/01-the-lighthouse-keepers/lamp-room.jpg"])
    func aMediaFileReplacedByAFIFOStopsThePackWithoutWaiting(_ file: String) throws {
        // Small files are read ahead, larger ones streamed: neither waits for a writer.
        let packed = try packChangingMidway(file) { target in
            unlink(target.path)
            mkfifo(target.path, 0o644)
        }
        let error = try #require(packed.error, "the pack stopped")
        #expect(error.message.hasPrefix("the file changed while it was being packed"))
        #expect(!packed.zipLeft)
    }

    @Test func articleIDsSurviveReorderingAndRenumbering() throws {
        let copy = try outputFolder().appending(path: "issue")
        try FileManager.default.copyItem(at: Self.example, to: copy)
        func plan(_ loaded: (source: IssueSource?, articles: [ArticleSource], diagnostics: [Diagnostic])) throws
            -> [(slug: String, record: ArticleRecord)]
        {
            var planner = PackPlanner(try #require(loaded.source), sourceDateEpoch: nil)
            return loaded.articles.map { ($0.slug, planner.plan($0).record) }
        }
        let planBefore = try plan(try IssueSourceLoader().loadAll(copy))
        try FileManager.default.moveItem(
            at: copy.appending(path: "articles/01-the-lighthouse-keepers"),
            to: copy.appending(path: "articles/09-the-lighthouse-keepers"))
        let planAfter = try plan(try IssueSourceLoader().loadAll(copy))
        let idsBefore = Dictionary(uniqueKeysWithValues: planBefore.map { ($0.slug, $0.record.globalID) })
        let idsAfter = Dictionary(uniqueKeysWithValues: planAfter.map { ($0.slug, $0.record.globalID) })
        #expect(idsBefore == idsAfter)
        #expect(planAfter.last?.slug == "the-lighthouse-keepers")
        #expect(planBefore.flatMap { $0.record.assets.map(\.id) }.count == 6)
        #expect(planBefore.flatMap { $0.record.assets.map(\.id) }.sorted()
            == planAfter.flatMap { $0.record.assets.map(\.id) }.sorted())
    }
}
