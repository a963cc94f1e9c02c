import Foundation
import GalleyCore
import GalleyFormats

public struct PackOptions: Sendable {
    public var source: URL
    /// A folder (the zip goes inside as `<apple_id>.zip`) or a path ending in `.zip`;
    /// `nil` means the current folder.
    public var output: URL?
    public var force = false
    public var allowZip64 = false
    /// `SOURCE_DATE_EPOCH`: the entries' modification time, in seconds since 1970.
    public var sourceDateEpoch: Int64?
    /// `--bump`: the issue's `last_updated` for this pack (milliseconds since 1970), instead of
    /// the source's, so that apps and stores see a new version of an edited issue.
    public var lastUpdated: Int64?
    /// Whether and how square thumbnails are made (`--thumbnails`).
    public var thumbnails: ThumbnailMode = .attention
    /// Compute the zip's SHA-256 while writing it.
    public var computeSHA256 = true
    /// What a reader without Zip64 can open; exceeding it is an error unless `allowZip64`.
    public var limits = ZipLimits.classic
    /// The container limits and check settings `galley validate` would apply (`.galley.yml`):
    /// pack never writes a zip its own validate refuses.
    public var configuration = ValidationConfiguration()

    public init(source: URL, output: URL? = nil) {
        self.source = source
        self.output = output
    }

    /// `--output`, or the current folder.
    var givenOutput: URL { output ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath) }

    /// Whether the zip goes inside `--output` (as `<apple_id>.zip`): an existing folder, a path
    /// ending in `/`, or a missing path without `.zip` (made as needed). Else `--output` is the
    /// zip's own path.
    var outputIsFolder: Bool {
        let status = FileStatus(givenOutput.path)
        return status?.kind == .directory || givenOutput.hasDirectoryPath
            || (status == nil && givenOutput.pathExtension.lowercased() != "zip")
    }

    /// The folder the zip and its temporaries are written in.
    public var outputFolder: URL { outputIsFolder ? givenOutput : givenOutput.deletingLastPathComponent() }

    /// Removes this process's temporaries from `outputFolder`: for a pack cut short by a
    /// signal, which `defer` blocks never see.
    public func removeTemporaries() { AtomicFile.removeTemporaries(in: outputFolder, of: getpid()) }
}


/// `galley pack --thumbnails`: how each picture's 350x350 `crop_350_350` is made.
public enum ThumbnailMode: String, Sendable, CaseIterable {
    /// Cut around the most interesting part of the picture (libvips's attention crop).
    case attention
    /// Cut from the middle.
    case centre
    /// Make none: `crop_350_350` names the picture itself, as Linechef did.
    case none

    public var crop: ThumbnailCrop? {
        switch self {
        case .attention: .attention
        case .centre: .centre
        case .none: nil
        }
    }
}

public struct PackSummary: Sendable, Codable {
    public var path: String
    public var bytes: Int64
    @JSONNullable public var sha256: String?
    public var appleID: String
    public var globalID: String
    /// The issue's version as packed (with `--bump`, the time of the pack), in RFC 3339 as
    /// Galley's JSON gives instants; latest.json holds it in Dumpling's form.
    public var lastUpdated: String
    public var articles: Int
    public var assets: Int
    public var entries: Int
    public var warnings: [Diagnostic]

    package enum CodingKeys: String, CodingKey {
        case path, bytes, sha256, articles, assets, entries, warnings
        case appleID = "apple_id"
        case globalID = "global_id"
        case lastUpdated = "last_updated"
    }
}

/// How far a pack has got, for a progress bar.
public struct PackProgress: Sendable {
    public enum Phase: String, Sendable {
        /// Counting the zip's files before thumbnails are made, for an issue whose folder holds
        /// enough files to need Zip64 with them (`filesWithoutThumbnails`): `articlesDone` of
        /// `articlesTotal`.
        case counting
        /// Reading articles and writing latest.json: `articlesDone` of `articlesTotal`.
        case articles
        /// Writing the zip: `bytesDone` of `bytesTotal`, `entriesDone` of `entriesTotal`.
        case zip
    }

    public var phase: Phase = .zip
    public var articlesDone = 0
    public var articlesTotal = 0
    public var bytesDone: Int64
    public var bytesTotal: Int64
    public var entriesDone: Int
    public var entriesTotal: Int
}

/// `galley pack`: an issue source folder becomes a Dumpling-compatible issue zip.
///
/// Work happens in temporary files beside the output; the zip is moved into place only when it
/// is complete, so the output path never holds a half-written zip.
public struct Packer {
    public init() {}

    /// Packs, or throws `DiagnosticsError` (the source has problems: exit status 1) or
    /// `GalleyError` (it could not run: exit status 2). Warnings come back in the summary.
    public func pack(_ options: PackOptions, progress: ((PackProgress) -> Void)? = nil) throws -> PackSummary {
        let loader = IssueSourceLoader()
        let loaded = try loader.load(options.source)
        var diagnostics = loaded.diagnostics
        guard let source = loaded.source else { throw DiagnosticsError(diagnostics) }
        let output = try outputPath(options, appleID: source.appleID)
        let directory = output.deletingLastPathComponent()
        // Output folders are created as needed, and removed again (when still empty) if the pack fails.
        let created = try FolderMaker.make(directory)
        var succeeded = false
        defer { if !succeeded { FolderMaker.removeEmpty(created) } }
        // What a pack killed outright (SIGKILL, power loss) left here.
        AtomicFile.removeTemporaries(in: directory)
        // Every temporary of this run (latest.json, the zip, the thumbnails) goes in one folder
        // beside the output, made once and removed at the end. A signal's clean-up removes the
        // folder (AtomicFile.removeFolderOrFile), after which nothing can be written into it:
        // loose temporaries could appear after the clean-up had looked.
        let work = AtomicFile.temporaryName(for: directory.appending(path: "pack"))
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: false)
        defer { AtomicFile.removeFolderOrFile(work) }
        var maker: ThumbnailMaker?
        if let crop = options.thumbnails.crop {
            let scratch = work.appending(path: "thumbnails")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
            maker = ThumbnailMaker(folder: scratch, crop: crop)
        }
        // 0. With thumbnails and no Zip64, the issue's files counted without them first, where
        // its folder holds enough files to need Zip64 once each has a thumbnail.
        var counted: PlannedFiles?
        if maker != nil && !options.allowZip64 {
            var counting = PackProgress(bytesDone: 0, bytesTotal: 0, entriesDone: 0, entriesTotal: 0)
            counting.phase = .counting
            counted = try filesWithoutThumbnails(source, options: options) { done, total in
                counting.articlesDone = done
                counting.articlesTotal = total
                progress?(counting)
            }
        }
        let zipURL = work.appending(path: output.lastPathComponent)
        let writer = try ZipWriter(url: zipURL, hashing: options.computeSHA256, allowZip64: options.allowZip64)

        // 1. latest.json, one article at a time: read its fields, plan it, convert its body.
        // Each finished chunk of latest.json goes straight into the zip, its first entry, deflated
        // on a thread of its own while the next articles are built (deflating 128 MB after the
        // build was a third of packing 30,000 articles, on one core). The zip is in the work
        // folder: a pack that fails from here on leaves nothing of it. (With --allow-zip64 the
        // stream spools latest.json and adds it with its size known: see `ZipWriter.stream`.)
        // The planner (every id, name and probe of the issue) ends with this step: only its
        // entries and a few counts go on, so its tables are gone before the zip is written and
        // read back (at 30,000 articles, tens of megabytes that were alive at pack's peak).
        var reading = PackProgress(bytesDone: 0, bytesTotal: 0, entriesDone: 0, entriesTotal: 0)
        var thumbnailCount = 0
        var (planned, entries, manifest) = try Self.refusingZip64 { () throws -> (PlannedIssue, [ZipEntryPlan], ManifestWriter) in
            var planner = Self.issuePlanner(source, sourceDateEpoch: options.sourceDateEpoch, lastUpdated: options.lastUpdated,
                                            thumbnails: maker)
            let stream = try writer.stream(name: source.appleID + "/latest.json", mtime: planner.entryTime, compression: .deflate,
                                           maxBytes: options.limits.maxBytes)
            defer { stream.cancel() }
            let manifest = ManifestWriter(issue: planner.issue, output: stream.send)
            reading.phase = .articles
            reading.articlesTotal = source.articleFolders.count
            var built = try buildArticles(source, &planner, thumbnails: maker,
                                          zip64Limits: options.allowZip64 ? nil : options.limits, filesWithoutThumbnails: counted,
                                          checkingBodies: options.configuration) { _, record, _ in
                reading.articlesDone += 1
                progress?(reading)
                try manifest.append(record)
            }
            // The source's few findings go before the articles' (maybe thousands), in place.
            built.insert(contentsOf: diagnostics, at: 0)
            diagnostics = built
            try manifest.finish()
            try stream.finish()
            thumbnailCount = planner.plannedFiles.thumbnails
            return (PlannedIssue(planner), planner.takeEntries(), manifest)
        }
        diagnostics.putErrorsFirst()
        if diagnostics.contains(where: { $0.severity == .error }) { throw DiagnosticsError(diagnostics) }
        if output.deletingPathExtension().lastPathComponent != planned.issue.appleID {
            diagnostics.append(Diagnostic(
                .packZipName, "the zip is named `\(output.lastPathComponent)`, but Dumpling finds an issue zip by its `apple_id`",
                at: SourceLocation(path: output.path),
                hint: "Name it `\(planned.issue.appleID).zip`, or give a folder as --output."))
        }
        // 2. The container checks validate makes on a zip's names and sizes, before writing it.
        let gate = ContainerChecks(path: output.path, limits: Self.packingLimits(options.configuration.limits, zip: options.limits),
                                   packing: true)
        var container = Findings(configuration: options.configuration)
        gate.runPlanned(Self.planned(entries, appleID: planned.issue.appleID, manifestBytes: manifest.bytesWritten,
                                     root: source.root), into: &container)
        diagnostics += container.items
        if container.hasErrors { throw DiagnosticsError(diagnostics) }

        // Limits a reader without Zip64 can open.
        let entryCount = entries.count + 1
        let payload = entries.reduce(manifest.bytesWritten) { $0 + $1.size }
        if !options.allowZip64,
           let needed = Self.zip64Required(entries: entryCount, payload: payload, appleID: planned.issue.appleID, limits: options.limits,
                                           thumbnails: thumbnailCount) {
            diagnostics.append(needed)
            throw DiagnosticsError(diagnostics)
        }

        // 3. The zip: latest.json first, then the media by name.
        if FileManager.default.fileExists(atPath: output.path) && !options.force {
            throw GalleyError("the output already exists", id: .outputExists, path: output.path, hint: "Pass --force to replace it.")
        }
        let prefix = planned.issue.appleID + "/"
        var state = PackProgress(bytesDone: 0, bytesTotal: payload, entriesDone: 0, entriesTotal: entryCount)
        state.articlesDone = reading.articlesDone
        state.articlesTotal = reading.articlesTotal
        state.bytesDone += manifest.bytesWritten
        state.entriesDone = 1
        progress?(state)
        // A thread of its own reads the small files ahead (open, read, close) while this one
        // writes them into the zip: a 30,000-article issue's 60,000 pictures were 1.7 s on one
        // core with the other idle. At most `Self.readAhead` files of at most
        // `Self.readAheadBytes` each wait, and none is read past its planned size; a larger file,
        // or one that cannot be read or whose size changed, is streamed from its path here, as
        // before (which reports it).
        let toRead = entries
        try pipeline(capacity: Self.readAhead, produce: { send in
            for entry in toRead {
                let bytes = entry.size <= Self.readAheadBytes ? try? readFile(entry.path, expecting: Int(entry.size)) : nil
                try send(ReadAhead(entry: entry, bytes: bytes))
            }
        }, consume: { item in
            let entry = item.entry
            if let bytes = item.bytes {
                try writer.addData(name: prefix + entry.name, bytes, mtime: planned.entryTime, compression: entry.compression)
                state.bytesDone += entry.size
                progress?(state)
            } else {
                try writer.addFile(
                    name: prefix + entry.name, from: entry.path, size: entry.size, mtime: planned.entryTime,
                    compression: entry.compression
                ) { chunk in
                    state.bytesDone += chunk
                    progress?(state)
                }
            }
            state.entriesDone += 1
        })
        // Not needed past here; let go before the written zip's directory is read back.
        entries = []
        let (bytes, sha256, synced) = try writer.finishSyncingInBackground()
        defer { try? synced.wait() }  // a read-back that throws leaves no flush behind
        progress?(state)
        // The written zip's central directory through validate's own container checks: what
        // only compression tells (an entry deflating past the ratio limit) shows here.
        var written = Findings(configuration: options.configuration)
        let writtenDirectory = try ZipDirectory.read(path: zipURL.path, maxEntries: gate.limits.maxEntries)
        gate.run(writtenDirectory, zipFileName: "", into: &written)
        let refused = Self.refusals(written, allowZip64: options.allowZip64)
        if !refused.isEmpty { throw DiagnosticsError(diagnostics + refused) }

        // 4. On disk (the flush begun at `finishSyncingInBackground`, done while the zip was
        // read back), then into place, atomically; never over an existing file without --force.
        try synced.wait()
        try moveIntoPlace(zipURL, output, replace: options.force)
        succeeded = true
        return PackSummary(
            path: output.path, bytes: bytes, sha256: sha256, appleID: planned.issue.appleID,
            globalID: planned.issue.globalID, lastUpdated: DumplingDate.rfc3339(planned.issue.lastUpdated),
            articles: planned.articleCount, assets: planned.assetCount, entries: entryCount,
            warnings: diagnostics.filter { $0.severity != .error })
    }

    /// Media files read ahead of the zip's writing: how many may wait, and the largest read
    /// whole (at most 2 MiB held).
    static let readAhead = 16
    static let readAheadBytes: Int64 = 128 * 1024

    /// A media file for the zip, read whole when small (`bytes`).
    struct ReadAhead: Sendable {
        var entry: ZipEntryPlan
        var bytes: [UInt8]?
    }

    /// The container limits pack checks its plan and its written zip against: the configured
    /// ones (`.galley.yml`), except an entry count or total size at or above what a zip without
    /// Zip64 holds (`zip`: 65,535 entries, 4 GiB, where the defaults are). Such a limit is
    /// `zip64Required`'s to tell (`pack.zip64-required`, whose hint names `--allow-zip64`), and
    /// `--allow-zip64` lifts it; a limit configured below applies as configured.
    static func packingLimits(_ configured: ContainerLimits, zip: ZipLimits) -> ContainerLimits {
        var limits = configured
        if limits.maxEntries >= zip.maxEntries { limits.maxEntries = Int.max }
        if limits.maxTotalBytes >= UInt64(max(zip.maxBytes, 0)) { limits.maxTotalBytes = .max }
        return limits
    }

    /// `pack.zip64-required` for an issue of `entries` entries holding `payload` bytes, when
    /// the zip (with its headers and directory, estimated) would pass `limits`; nil when it fits.
    /// `counted`: what the counts are from, when not every article's files and thumbnails (pack
    /// stops as soon as the articles planned so far are over, see `buildArticles`); `thumbnails`:
    /// how many of the entries are thumbnails pack made.
    static func zip64Required(entries: Int, payload: Int64, appleID: String, limits: ZipLimits,
                              counted: Zip64Count? = nil, thumbnails: Int = 0) -> Diagnostic? {
        let overhead = Int64(entries) * Int64(2 * (46 + 24) + 2 * (appleID.utf8.count + 64))
        guard entries > limits.maxEntries || payload + overhead > limits.maxBytes else { return nil }
        let scope = counted?.words(thumbnails: thumbnails)
        let atLeast = scope == nil ? "" : "at least "
        var reason = entries > limits.maxEntries
            ? "\(atLeast)\(entries) entries (the most a zip without Zip64 holds is \(limits.maxEntries))"
            : "\(atLeast)about \(payload + overhead) bytes (the most a zip without Zip64 holds is \(limits.maxBytes))"
        if let scope { reason += ", " + scope }
        var hint = "Split the issue or shrink its media; --allow-zip64 packs it anyway for readers that support Zip64."
        if thumbnails > 0, entries > limits.maxEntries {
            hint += " \(thumbnails) of the entries are the thumbnails pack makes (--thumbnails none makes none, and each picture is its own crop_350_350)."
        }
        return Diagnostic(.packZip64Required, "the issue needs \(reason), and Dumpling cannot read Zip64",
                          at: SourceLocation(path: ""), hint: hint)
    }

    /// The findings on the written zip that stop a pack: its errors, except the Zip64 records
    /// that --allow-zip64 asked for (an issue over 65,535 files or 4 GiB has them).
    static func refusals(_ written: Findings, allowZip64: Bool) -> [Diagnostic] {
        written.items.filter { $0.severity == .error && !(allowZip64 && $0.id == Check.zipZip64.id) }
    }

    /// Everything pack checks, without writing anything: for `galley validate` on a source
    /// folder, body checks included (`configuration` applied to every finding).
    /// `limits` are what a zip without Zip64 holds, as pack's default (no Zip64) allows: the
    /// most entries, and the most bytes, for latest.json as it streams and for the whole issue;
    /// tests give less than 65,535 entries or 4 GiB. `temporaryFolder`: where the scratch zip's
    /// folder is made (and removed).
    public func check(
        _ root: URL, configuration: ValidationConfiguration = ValidationConfiguration(),
        limits: ZipLimits = .classic, temporaryFolder: URL = FileManager.default.temporaryDirectory
    ) throws -> [Diagnostic] {
        // latest.json is written and deflated as pack would (into a zip in a temporary folder,
        // removed after, deflated on a thread of its own as the articles are built): its size and
        // compression ratio are container limits too. Media files are not.
        let scratch = temporaryFolder.appending(path: "galley-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let zip = scratch.appending(path: "latest.zip")
        var manifest: ManifestWriter?
        var writer: ZipWriter?
        var stream: ZipEntryStream?
        defer { stream?.cancel() }
        do {
            let walked = try walk(root, checkingBodies: configuration, onIssue: { issue in
                // Without Zip64, as pack's default: the entry streams (see `ZipWriter.stream`).
                let zipWriter = try ZipWriter(url: zip, hashing: false, allowZip64: false)
                let opened = try zipWriter.stream(name: "\(issue.appleID)/latest.json", mtime: 0, compression: .deflate,
                                                  maxBytes: limits.maxBytes)
                (writer, stream) = (zipWriter, opened)
                manifest = ManifestWriter(issue: issue, output: opened.send)
            }) { _, record, _ in
                try manifest?.append(record)
            }
            var container = Findings(configuration: configuration)
            if let issue = walked.issue, let manifest, let writer, let stream,
               !walked.diagnostics.contains(where: { $0.severity == .error }) {
                try manifest.finish()
                try stream.finish()
                _ = try writer.finish()
                let gate = ContainerChecks(path: "\(issue.appleID).zip", limits: Self.packingLimits(configuration.limits, zip: limits),
                                           packing: true)
                gate.runPlanned(Self.planned(walked.entries, appleID: issue.appleID, manifestBytes: manifest.bytesWritten, root: root),
                                into: &container)
                // What pack (without --allow-zip64, its default) refuses next.
                let payload = walked.entries.reduce(manifest.bytesWritten) { $0 + $1.size }
                if let needed = Self.zip64Required(entries: walked.entries.count + 1, payload: payload, appleID: issue.appleID,
                                                   limits: limits) {
                    container.adopt([needed])
                } else if let likely = Self.zip64WithThumbnails(entries: walked.entries.count + 1,
                                                                candidates: walked.thumbnailCandidates, limits: limits) {
                    container.adopt([likely])
                }
                var written = Findings(configuration: configuration)
                gate.run(try ZipDirectory.read(path: zip.path, maxEntries: 1), zipFileName: "", into: &written)
                for item in written.items where item.id == Check.zipRatio.id {
                    var located = item
                    located.location = SourceLocation(path: "")
                    container.adopt([located])
                }
            }
            return walked.diagnostics + container.items
        } catch let error as ZipEntryNeedsZip64 {
            return [Self.manifestNeedsZip64(error)]  // where pack stops too
        }
    }

    /// `body`, with a latest.json too large for a zip without Zip64 (`ZipEntryNeedsZip64`, found
    /// as it streams) refused as `pack.zip64-required`, as an issue over the limits is.
    static func refusingZip64<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ZipEntryNeedsZip64 {
            throw DiagnosticsError([manifestNeedsZip64(error)])
        }
    }

    static func manifestNeedsZip64(_ error: ZipEntryNeedsZip64) -> Diagnostic {
        Diagnostic(
            .packZip64Required,
            "the issue's latest.json is over \(error.maxBytes) bytes (the most an entry holds in a zip without Zip64), and Dumpling cannot read Zip64",
            at: SourceLocation(path: ""),
            hint: "Split the issue or shorten its articles; --allow-zip64 packs it anyway for readers that support Zip64.")
    }

    /// The zip's entries as the container checks see them (latest.json first), each located at
    /// its source file. Lazy: each name is made as the checks reach it and let go after, and a
    /// location only for a finding.
    static func planned(_ entries: [ZipEntryPlan], appleID: String, manifestBytes: Int64, root: URL)
        -> LazyMapCollection<Range<Int>, PlannedEntry> {
        let base = root.standardizedFileURL.path + "/"
        return (-1..<entries.count).lazy.map { index in
            guard index >= 0 else {
                return PlannedEntry(name: "\(appleID)/latest.json", size: UInt64(max(manifestBytes, 0))) { SourceLocation(path: "") }
            }
            let entry = entries[index]
            return PlannedEntry(name: "\(appleID)/\(entry.name)", size: UInt64(max(entry.size, 0))) {
                let path = entry.origin ?? entry.path
                return SourceLocation(path: path.hasPrefix(base) ? String(path.dropFirst(base.count)) : path)
            }
        }
    }

    /// Reads, plans and converts a source folder as pack does, without writing anything, handing
    /// each finished article to `sink`. Returns the issue, the files the zip would hold (with
    /// their names in it), every finding, and how many pictures pack with its default
    /// thumbnails would try to make a thumbnail of (none is made here).
    public func walk(
        _ root: URL, checkingBodies configuration: ValidationConfiguration? = nil, onIssue: ((IssueRecord) throws -> Void)? = nil,
        sink: (ArticleSource, ArticleRecord, _ bodyLineOffset: Int) throws -> Void
    ) throws -> (issue: IssueRecord?, entries: [ZipEntryPlan], diagnostics: [Diagnostic], thumbnailCandidates: Int) {
        let loaded = try IssueSourceLoader().load(root)
        guard let source = loaded.source else { return (nil, [], loaded.diagnostics, 0) }
        var planner = Self.issuePlanner(source, sourceDateEpoch: nil, thumbnails: nil, countingThumbnailCandidates: true)
        try onIssue?(planner.issue)
        let diagnostics = try buildArticles(source, &planner, checkingBodies: configuration, sink: sink)
        return (planner.issue, planner.takeEntries(), loaded.diagnostics + diagnostics, planner.thumbnailCandidateCount)
    }

    /// Articles handled together: read and converted on every core, planned in order. Memory
    /// holds two batches (one being read, one being planned and built), whatever the issue's size.
    static let batchSize = 32

    /// Reads, plans and converts each article in issue order, handing each finished record to
    /// `sink`; returns every finding, the planner's included, errors first.
    ///
    /// The next batch is read on the worker threads while this one plans the batch before it,
    /// builds its bodies and hands them to `sink`: planning and the sink (latest.json) must stay
    /// in issue order on one thread, and done between one batch's reading and the next they
    /// kept this thread 90% busy while the other core idled (30,000 articles).
    /// `zip64Limits`: what a zip without Zip64 holds, when pack is to stop as soon as the
    /// articles planned so far need more (`pack.zip64-required`, thrown with the findings so
    /// far), not after planning, and making thumbnails for, every article. `checkingBodies`:
    /// the configuration to run validate's body checks with on each finished body (on the
    /// worker threads, as the bodies are built), so that pack refuses what `galley validate`
    /// would refuse in its zip; nil for none (render, which sanitises bodies itself).
    /// `filesWithoutThumbnails`: what the whole issue's plan holds without thumbnails, when a
    /// count made before (`filesWithoutThumbnails(_:options:progress:)`) says so: the check
    /// then adds the thumbnails made so far to it, and stops a pack as soon as those are over.
    /// `buildingBodies` false plans the articles without converting their bodies (for that
    /// count; `sink` then gets each record with its body unconverted).
    func buildArticles(
        _ source: IssueSource, _ planner: inout PackPlanner, thumbnails maker: ThumbnailMaker? = nil,
        zip64Limits: ZipLimits? = nil, filesWithoutThumbnails: PlannedFiles? = nil,
        checkingBodies configuration: ValidationConfiguration? = nil, buildingBodies: Bool = true,
        sink: (ArticleSource, ArticleRecord, _ bodyLineOffset: Int) throws -> Void
    ) throws -> [Diagnostic] {
        let loader = IssueSourceLoader()
        let builder = BodyBuilder()
        builder.prepare()
        var diagnostics: [Diagnostic] = []
        let folders = source.articleFolders
        let starts = Array(stride(from: 0, to: folders.count, by: Self.batchSize))
        // 1. Fields, the body converted and its local files found, and the first bytes of
        //    every media file, on the worker threads, a batch ahead.
        func read(_ start: Int) -> BackgroundMap<LoadedArticle> {
            BackgroundMap(Array(folders[start..<min(start + Self.batchSize, folders.count)])) { folder in
                Self.load(folder, of: source, loader: loader, builder: builder, thumbnails: maker)
            }
        }
        var next = starts.first.map(read)
        defer { next?.wait() }  // a sink that throws leaves no reading behind
        for index in starts.indices {
            guard let current = next else { break }
            let loaded = current.results()
            next = index + 1 < starts.count ? read(starts[index + 1]) : nil
            // 2. Ids, names, dates and media kinds, in issue order.
            var planned: [PlannedBody] = []
            for item in loaded {
                diagnostics += item.diagnostics
                guard let article = item.article, let body = item.body else { continue }
                // An article with an error goes no further, but its placeholders are still
                // checked against the assets it lists, so that every problem of it is told at
                // once (a missing picture hid a misspelt placeholder until it was fixed).
                if item.diagnostics.contains(where: { $0.severity == .error }) {
                    diagnostics += Self.placeholderFindings(article, body, builder: builder)
                    continue
                }
                planner.probed = item.probes
                planner.thumbnails = item.thumbnails
                let errorsBefore = planner.diagnostics.errorCount
                let plan = planner.plan(article, body: item.bodyFiles)
                // An asset that could not be planned would make its placeholders look unknown
                // to the plan's keys: they are checked against the listed ones instead.
                guard planner.diagnostics.errorCount == errorsBefore else {
                    diagnostics += Self.placeholderFindings(article, body, builder: builder)
                    continue
                }
                planned.append(PlannedBody(article: article, record: plan.record, body: body, assetIDs: plan.assetIDs,
                                           links: plan.links))
            }
            // The entries only grow: once over, the rest of the issue (and its thumbnails, some
            // 10 ms of libvips each) would be made for a pack that is refused anyway.
            // With the whole issue's files counted before, the thumbnails made so far are added
            // to them (never fewer than the articles planned so far hold): 30,000 articles of two
            // pictures are over once 5,534 thumbnails are made (a minute), where the first
            // articles' own files and thumbnails were over only at the 16,384th article (ten
            // minutes of libvips).
            let files = planner.plannedFiles
            let soFar = (articles: min(starts[index] + Self.batchSize, folders.count), of: folders.count)
            var counted = (entries: files.count + 1, bytes: files.bytes, scope: Zip64Count.firstArticles(soFar))
            if let whole = filesWithoutThumbnails, whole.count + files.thumbnails > files.count {
                counted = (whole.count + files.thumbnails + 1, max(whole.bytes, files.bytes), .wholeIssue(soFar))
            }
            if let zip64Limits, let needed = Self.zip64Required(
                entries: counted.entries, payload: counted.bytes, appleID: source.appleID, limits: zip64Limits,
                counted: counted.scope, thumbnails: files.thumbnails) {
                var found = diagnostics + planner.diagnostics.items
                found.putErrorsFirst()
                throw DiagnosticsError(found + [needed])
            }
            guard buildingBodies else {
                for item in planned { try sink(item.article, item.record, item.body.lineOffset) }
                continue
            }
            // 3. Bodies, on every core.
            let built = parallelMap(planned) { item -> (PlannedBody, [Diagnostic]) in
                var item = item
                let result = builder.build(item.body, ids: item.assetIDs, links: item.links)
                item.record.body = result.body
                guard let configuration else { return (item, result.diagnostics) }
                return (item, result.diagnostics + BodyChecks.findings(
                    of: item.article, body: result.body, lineOffset: item.body.lineOffset, configuration: configuration))
            }
            for (item, found) in built {
                diagnostics += found
                try sink(item.article, item.record, item.body.lineOffset)
            }
        }
        // The planner's findings are handed over, not copied: they can be most of them.
        var all = planner.takeDiagnostics()
        all.insert(contentsOf: diagnostics, at: 0)
        all.putErrorsFirst()
        return all
    }

    /// One article read for planning: its fields, its body prepared and the files it names,
    /// the first bytes of its media and its thumbnails. Safe on any thread.
    static func load(
        _ folder: ArticleFolder, of source: IssueSource, loader: IssueSourceLoader, builder: BodyBuilder, thumbnails maker: ThumbnailMaker?
    ) -> LoadedArticle {
        let (read, body, files, found) = loader.loadArticleAndBody(folder, of: source, builder: builder)
        guard var article = read else { return LoadedArticle(article: nil, diagnostics: found) }
        // Each <img> of the body becomes an asset here, once, so thumbnails and planning see it.
        let bodyFiles = BodyFiles.resolve(body?.references ?? [], files: files, into: &article)
        let probes = Self.probes(of: article.assets, and: files.values.sorted { $0.relativePath < $1.relativePath })
        // No thumbnails for an article that goes no further.
        let failed = found.contains { $0.severity == .error }
        return LoadedArticle(article: article, diagnostics: found, probes: probes, body: body, bodyFiles: bodyFiles,
                             thumbnails: failed ? [:] : Self.thumbnails(of: article.assets, maker: maker, probes: probes))
    }

    /// The placeholder findings of an article that goes no further: keys checked against
    /// every asset the article lists, found or not.
    static func placeholderFindings(_ article: ArticleSource, _ body: PreparedBody, builder: BodyBuilder) -> [Diagnostic] {
        let keys = article.assets.map(\.key) + article.unresolvedAssetKeys
        let ids = Dictionary(keys.map { ($0, $0) }, uniquingKeysWith: { first, _ in first })
        return builder.build(body, ids: ids).diagnostics  // its findings are the placeholders' alone
    }

    struct LoadedArticle: Sendable {
        var article: ArticleSource?
        var diagnostics: [Diagnostic]
        var probes: [String: MediaProbe] = [:]
        var body: PreparedBody?
        var bodyFiles = BodyFiles()
        var thumbnails: [String: ThumbnailMaker.Outcome] = [:]
    }

    /// The planner of `source`'s issue, its own images read once and their thumbnails made
    /// (when `thumbnails` is given): for pack, validate and render alike.
    static func issuePlanner(
        _ source: IssueSource, sourceDateEpoch: Int64?, lastUpdated: Int64? = nil, thumbnails maker: ThumbnailMaker?,
        countingThumbnailCandidates: Bool = false
    ) -> PackPlanner {
        let probes = Self.probes(of: source.images)
        return PackPlanner(source, sourceDateEpoch: sourceDateEpoch, lastUpdated: lastUpdated, probed: probes,
                           thumbnails: Self.thumbnails(of: source.images, maker: maker, probes: probes),
                           countingThumbnailCandidates: countingThumbnailCandidates)
    }

    /// The first bytes of every file of `assets` (their thumbnails and posters too) and of
    /// `others`, read once, by path; a file that cannot be read is left for the planner to report.
    static func probes(of assets: [AssetSource], and others: [SourceFile] = []) -> [String: MediaProbe] {
        var probes: [String: MediaProbe] = [:]
        let files = assets.flatMap { [$0.file] + ($0.thumbnail.map { [$0] } ?? []) + ($0.poster.map { [$0] } ?? []) } + others
        for file in files where file.size > 0 && probes[file.path] == nil {
            if let probe = try? MediaProber.probe(path: file.path) { probes[file.path] = probe }
        }
        return probes
    }

    /// The square thumbnails of the pictures among `assets` that get one (by source path):
    /// images without a `thumbnail`, and videos' and sounds' posters. One at a time here:
    /// callers already run on every core, except for the issue's few images.
    static func thumbnails(
        of assets: [AssetSource], maker: ThumbnailMaker?, probes: [String: MediaProbe]
    ) -> [String: ThumbnailMaker.Outcome] {
        guard let maker else { return [:] }
        var made: [String: ThumbnailMaker.Outcome] = [:]
        for asset in assets {
            guard let kind = probes[asset.file.path]?.format.kind, let picture = PackPlanner.thumbnailSource(asset, kind: kind),
                  made[picture.relativePath] == nil, let probe = probes[picture.path] else { continue }
            // A picture whose header claims more pixels than any magazine needs is a
            // decompression bomb or a mistake: libvips would spend minutes on it.
            if let size = probe.pixelSize, size.width * size.height > ThumbnailMaker.maxPixels {
                made[picture.relativePath] = .failed(
                    "it is \(size.width)x\(size.height) pixels, past the \(ThumbnailMaker.maxPixels / 1_000_000)-megapixel limit")
                continue
            }
            made[picture.relativePath] = maker.thumbnail(of: picture, format: probe.format)
        }
        return made
    }

    struct PlannedBody: Sendable {
        package var article: ArticleSource
        package var record: ArticleRecord
        var body: PreparedBody
        var assetIDs: [String: String]
        var links: [String: PreparedBody.Target]
    }

    /// Where the zip goes: inside `--output` when it is a folder, names a missing path without
    /// `.zip`, or ends in `/` (folders are made as needed); else `--output` itself, a `.zip` path.
    func outputPath(_ options: PackOptions, appleID: String) throws -> URL {
        let given = options.givenOutput
        let status = FileStatus(given.path)
        if options.outputIsFolder {
            guard status == nil || status?.kind == .directory else {
                throw GalleyError("the output is a file, not a folder", id: .outputUnwritable, path: given.path,
                                  hint: "Give a folder (the zip goes inside as \(appleID).zip) or a path ending in .zip.")
            }
            return given.appending(path: "\(appleID).zip")
        }
        guard given.pathExtension.lowercased() == "zip" else {
            throw GalleyError("the output is neither a folder nor a .zip path", id: .usage, path: given.path,
                              hint: "Give a folder (the zip goes inside as \(appleID).zip) or a path ending in .zip.")
        }
        if status != nil && !options.force {
            throw GalleyError("the output already exists", id: .outputExists, path: given.path, hint: "Pass --force to replace it.")
        }
        return given
    }

    private func moveIntoPlace(_ temporary: URL, _ output: URL, replace: Bool) throws {
        if replace {
            guard rename(temporary.path, output.path) == 0 else {
                throw GalleyError("cannot move the zip into place: \(String(cString: strerror(errno)))", id: .outputUnwritable, path: output.path)
            }
            return
        }
        // link() fails if the output appeared meanwhile: nothing is ever overwritten.
        guard link(temporary.path, output.path) == 0 else {
            let reason = errno == EEXIST ? "the output already exists" : String(cString: strerror(errno))
            throw GalleyError("cannot move the zip into place: \(reason)", id: .outputUnwritable, path: output.path,
                              hint: errno == EEXIST ? "Pass --force to replace it." : nil)
        }
        unlink(temporary.path)
    }
}
