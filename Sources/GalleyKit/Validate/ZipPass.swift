import Foundation
import GalleyCore
import GalleyFormats

/// Receives each file of the issue folder as a content pass inflates it: `galley import`
/// extracts through one, so the zip is inflated (and its CRCs checked) once, not once to check
/// and again to extract. A sink's error stops the pass and is thrown from it.
package protocol ZipEntrySink: AnyObject {
    /// Starts the file `name` (relative to the issue folder), of `size` bytes as declared. The
    /// name is a slice of the zip directory's own (no copy per file: a sink that keeps every
    /// name, as import's does, kept 60,000 copies beside the directory's at 30,000 articles).
    func begin(_ name: Substring, size: Int64) throws
    /// The next bytes of the current file.
    func write(_ chunk: ArraySlice<UInt8>) throws
    /// The current file ended (its CRC and size matched).
    func finish() throws
    /// How many of the chunks handed to `write` the sink may still hold when the next is read
    /// (the reader takes turns with as many buffers and one more, `ZipEntryReader.keepsChunks`).
    var keepsChunks: Int { get }
}

extension ZipEntrySink {
    package var keepsChunks: Int { 0 }
}

/// A zip whose container, latest.json and references passed `ZipOpening.checkHead`: what the
/// content pass needs, kept between the two halves (the manifest's index, the file list).
package struct ZipCheck: Sendable {
    let pass: EntryPass
    /// The issue's own fields from latest.json.
    package let issue: IssueRecord
    let index: ManifestIndex
    let contents: ZipContents
    let configuration: ValidationConfiguration

    package var directory: ZipDirectory { pass.directory }

    /// The second half of `validateZip`: one streaming pass over every entry (CRCs, real sizes,
    /// media heads, SVG script), each file also handed to `sink`, then the media checks on what
    /// the pass saw. Returns the findings; throws only what `sink` threw.
    package func checkContent(sink: (any ZipEntrySink)?) throws -> [Diagnostic] {
        var findings = Findings(configuration: configuration)
        var contents = self.contents
        var pass = self.pass
        pass.mode = .contentOnly
        _ = try pass.run(sink: sink, contents: &contents, into: &findings)
        MediaChecks(zipPath: pass.path).runAll(index, contents: contents, into: &findings)
        return findings.items
    }
}

/// A zip whose container passed `Validator.openZipForImport`: the rest of validate's checks,
/// either in turn (`checkHead`, then `ZipCheck.checkContent`) or in one go with latest.json's
/// checks on a thread of their own beside the content pass that hands every file to a sink
/// (`checkBeside`: an import's extraction into staging). At 30,000 articles the two take 2 and
/// 3 seconds; one after the other they were more than half of an import.
package struct ZipOpening: Sendable {
    let pass: EntryPass
    let contents: ZipContents
    let configuration: ValidationConfiguration

    package var directory: ZipDirectory { pass.directory }

    /// Whether latest.json is the zip's first entry, as `checkBeside` needs: validate's one pass
    /// reads the entries in order, and stops at a damaged latest.json before any file.
    package var manifestFirst: Bool { directory.entries.first?.displayName == pass.manifestName }

    /// The issue's own fields as latest.json gives them before its first article, read from
    /// the zip's first entry and at most `peekBytes` of it (Linechef's and Galley's zips give
    /// them first), or nil when latest.json is not the first entry, cannot be read that far or
    /// puts its articles first. A hint for the import to choose its way (`SQLiteStore.extractsBeside`):
    /// nothing is checked here, and the checks read latest.json whole whatever this says.
    package func peekIssue() -> IssueRecord? {
        guard manifestFirst, let reader = try? ZipEntryReader(path: pass.path, directory: directory),
              let entry = reader.next(), entry.name == pass.manifestName else { return nil }
        var read = 0
        var stream = ManifestStream(chunks: {
            guard read < Self.peekBytes, let chunk = try reader.readChunk() else { return nil }
            read += chunk.count
            return chunk
        })
        return try? stream.readHead().record
    }

    /// How much of latest.json `peekIssue` reads at most.
    static let peekBytes = 1 << 20

    /// latest.json's checks and the references, reading latest.json only: the findings, and
    /// what the content pass needs when latest.json was read to its end.
    package func checkHead() -> (findings: [Diagnostic], check: ZipCheck?) {
        var findings = Findings(configuration: configuration)
        var contents = self.contents
        var manifestPass = pass
        manifestPass.mode = .manifestOnly
        let index = (try? manifestPass.run(sink: nil, contents: &contents, into: &findings)) ?? nil
        guard let index, let issue = index.issue else { return (findings.items, nil) }
        ReferenceChecks(manifestPath: pass.manifestDisplay).run(index, contents: contents, into: &findings)
        return (findings.items, ZipCheck(pass: manifestPass, issue: issue, index: index, contents: contents, configuration: configuration))
    }

    /// Runs latest.json's checks beside the content pass (which gives `sink` every file,
    /// latest.json too, each as its CRC passes), then the reference and media checks. Returns
    /// the findings, and the issue's own fields when latest.json was read to its end (when it
    /// was not, the findings hold the error, and the content's findings are left out, as
    /// `galley validate`'s one pass would have stopped there). Throws only what `sink` threw.
    /// `articles` is handed each article of latest.json as its checks pass it, on their thread
    /// (`Validator.ArticleObserver`).
    ///
    /// `manifestSink`: where latest.json goes instead, from its checks' thread as they inflate
    /// it (`sink` then gets every other file): latest.json inflated once, not twice, and off the
    /// content pass's thread, which is the one an import waits for (a 30,000-article issue's
    /// 128 MB latest.json was 0.18 s of that thread's inflating alone).
    package func checkBeside(
        sink: (any ZipEntrySink)?, manifestSink: (any ZipEntrySink & Sendable)? = nil, articles: Validator.ArticleObserver? = nil
    ) throws -> (findings: [Diagnostic], issue: IssueRecord?) {
        let halves = try bothHalves(contentMode: manifestSink == nil ? .contentOnly : .besideManifest, sink: sink,
                                    manifestSink: manifestSink, articles: articles)
        var findings = Findings(configuration: configuration)
        findings.append(halves.manifestFindings)
        guard let index = halves.index, let issue = index.issue else { return (findings.items, nil) }
        let checked = MediaChecks(zipPath: pass.path).runAll(
            index, contents: halves.contents, beside: ReferenceChecks(manifestPath: pass.manifestDisplay), configuration: configuration)
        findings.append(checked.references)
        findings.append(halves.contentFindings)
        findings.append(checked.media)
        return (findings.items, issue)
    }

    /// latest.json's checks and the content pass (`contentMode`, handing files to `sink`) side
    /// by side on two threads, both from the same file list (copies share it; only the content
    /// pass records sniffs). For `checkBeside` and validate's full check. With a sink, the
    /// content pass runs on this thread (the sink is this thread's); without one, latest.json's
    /// checks do: the index they build is kept for the later checks, and made on another thread
    /// it came from that thread's own heap, which the rest cannot reuse (validate's peak at
    /// 30,000 articles 51.0 MB against 48.8).
    func bothHalves(
        contentMode: EntryPass.Mode, sink: (any ZipEntrySink)?, manifestSink: (any ZipEntrySink & Sendable)? = nil,
        articles: Validator.ArticleObserver? = nil
    ) throws -> (index: ManifestIndex?, manifestFindings: Findings, contents: ZipContents, contentFindings: Findings) {
        var manifestOnly = pass
        manifestOnly.mode = .manifestOnly
        manifestOnly.articles = articles
        manifestOnly.manifestSink = manifestSink
        let manifestPass = manifestOnly
        var contentOnly = pass
        contentOnly.mode = contentMode
        let contentPass = contentOnly
        let (shared, configuration) = (contents, configuration)
        @Sendable func checkManifest() throws -> (ManifestIndex?, Findings) {
            var contents = shared
            var findings = Findings(configuration: configuration)
            let index = try manifestPass.run(sink: nil, contents: &contents, into: &findings)
            return (index, findings)
        }
        @Sendable func checkContent(_ sink: (any ZipEntrySink)?) throws -> (ZipContents, Findings) {
            var contents = shared
            var findings = Findings(configuration: configuration)
            _ = try contentPass.run(sink: sink, contents: &contents, into: &findings)
            return (contents, findings)
        }
        let content: Result<(ZipContents, Findings), any Error>
        let manifest: Result<(ManifestIndex?, Findings), any Error>
        if let sink {
            (content, manifest) = alongside(checkManifest) { try checkContent(sink) }
        } else {
            (manifest, content) = alongside({ try checkContent(nil) }, checkManifest)
        }
        let (contents, contentFindings) = try content.get()
        // Without a sink the manifest's pass never throws; should it ever, its error is the
        // caller's (a zip is never let through because a part of its check went missing).
        let (index, manifestFindings) = try manifest.get()
        return (index, manifestFindings, contents, contentFindings)
    }
}

/// One streaming pass over a zip's entries in file order, each read at the offset Galley's own
/// central directory found (`ZipEntryReader`, which checks each CRC-32 as an entry ends).
struct EntryPass: Sendable {
    enum Mode: Sendable {
        /// latest.json's checks; the pass stops after it.
        case manifestOnly
        /// latest.json's checks, then every other entry's content.
        case everything
        /// Every entry's content; latest.json (checked before) is only passed to the sink.
        case contentOnly
        /// Every entry's content but latest.json's, which a `.manifestOnly` pass checks at the
        /// same time on another thread.
        case besideManifest
    }

    let path: String
    let directory: ZipDirectory
    let top: String
    let manifestName: String
    var mode: Mode
    let checker: Validator
    /// Handed each article of latest.json once checked, when this pass checks latest.json.
    var articles: Validator.ArticleObserver?
    /// Handed latest.json's bytes as its checks read them, when this pass checks latest.json
    /// (`ZipOpening.checkBeside`): `finish` only once all of them came and their size is the
    /// declared one; a CRC that does not match is the pass's finding, as for any entry.
    var manifestSink: (any ZipEntrySink & Sendable)?

    var manifestDisplay: String { "\(path)!\(manifestName)" }

    /// Runs the pass; returns latest.json's index when this pass checked it. Damage is a finding;
    /// only `sink`'s errors are thrown.
    func run(sink: (any ZipEntrySink)?, contents: inout ZipContents, into findings: inout Findings) throws -> ManifestIndex? {
        var index: ManifestIndex?
        let at = SourceLocation(path: path)
        let folder = top + "/"
        // The entry being read, so that damage names the file it is in.
        var reading: String?
        do {
            let reader = try ZipEntryReader(path: path, directory: directory)
            if let sink { reader.keepsChunks = sink.keepsChunks }
            while let entry = reader.next() {
                if entry.isDirectory { continue }
                reading = entry.name
                // The container checks refuse names outside the top folder; should such an
                // entry come here anyway (a validate whose configuration tolerates it), it is
                // checked but handed to no sink: a name is only ever written inside the issue.
                let inFolder = entry.name.utf8.starts(with: folder.utf8)
                let sink = inFolder ? sink : nil
                let name = Substring(entry.name.utf8.dropFirst(inFolder ? folder.utf8.count : 0))
                // The size the central directory declares.
                let limit = Int64(clamping: contents.facts(entry.number).size)
                if entry.name == manifestName, mode != .contentOnly {
                    if mode == .besideManifest {
                        reader.skip()
                        continue
                    }
                    index = try checkManifest(reader, entry, name: name, limit: limit, into: &findings)
                    if mode == .manifestOnly { break }
                    continue
                }
                if mode == .manifestOnly {
                    reader.skip()
                    continue
                }
                try sinking { try sink?.begin(name, size: limit) }
                var head: [UInt8] = []
                let wanted = 4096
                // SVG is decided by the first chunk (or the name): its whole text is scanned for
                // script as it passes.
                var svg: SVGScanner?
                var first = true
                var sinkError: (any Error)?
                let isMedia = entry.name != manifestName
                let (bytes, complete) = try reader.read(limit: limit) { chunk in
                    if isMedia {
                        if head.count < wanted { head.append(contentsOf: chunk.prefix(wanted - head.count)) }
                        if first {
                            first = false
                            if entry.name.lowercased().hasSuffix(".svg") || MediaFormat.sniff(Array(chunk.prefix(wanted))) == .svg {
                                svg = SVGScanner()
                            }
                        }
                        svg?.feed(chunk)
                    }
                    if sinkError == nil, let sink {
                        do { try sink.write(chunk) } catch { sinkError = error }
                    }
                }
                if let sinkError { throw SinkFailure(error: sinkError) }
                if !complete || bytes != limit {
                    sizeMismatch(entry.name, bytes: complete ? bytes : nil, limit: limit, into: &findings)
                    if !complete { break }
                }
                try sinking { try sink?.finish() }
                if isMedia {
                    contents.setSniffed(ZipContents.Sniffed(head), entry: entry.number)
                    if let inspection = svg?.finish() { contents.svgs[String(name)] = inspection }
                }
            }
        } catch let error as ZipEntryReader.ReadError {
            findings.adopt([ContentDamage.unreadable(error, zip: path, entry: reading)])
        } catch let failure as SinkFailure {
            throw failure.error
        } catch {
            findings.add(.zipUnreadable, "cannot be read: \(error)", at: at, hint: "Check the file.")
        }
        return index
    }

    /// A sink's error, told apart from the zip's own damage (a finding) on its way out.
    private struct SinkFailure: Error { var error: any Error }

    private func sinking(_ body: () throws -> Void) throws {
        do { try body() } catch { throw SinkFailure(error: error) }
    }

    /// Streams latest.json through the manifest checks (one article in memory at a time), and
    /// its bytes to `manifestSink` when there is one (otherwise latest.json reaches a sink
    /// through `.contentOnly`'s common path).
    private func checkManifest(
        _ reader: ZipEntryReader, _ entry: ZipEntryReader.Entry, name: Substring, limit: Int64, into findings: inout Findings
    ) throws -> ManifestIndex {
        var bytes: Int64 = 0
        var overflow = false
        var sinkError: (any Error)?
        let sink = manifestSink
        try sinking { try sink?.begin(name, size: limit) }
        func take(_ chunk: [UInt8]) {
            bytes += Int64(chunk.count)
            if bytes > limit { overflow = true }
            if !overflow, sinkError == nil, let sink {
                do { try sink.write(chunk[...]) } catch { sinkError = error }
            }
        }
        // Once the sink failed (a full disk) the rest is not read: the error refuses the zip.
        var manifest = ManifestStream { () -> [UInt8]? in
            guard !overflow, sinkError == nil, let chunk = try reader.readChunk() else { return nil }
            take(chunk)
            return chunk
        }
        let index = checker.checkManifest(&manifest, display: manifestDisplay, top: top, into: &findings, articles: articles)
        if let error = manifest.sourceError { throw error }
        while !overflow, sinkError == nil, let chunk = try reader.readChunk() { take(chunk) }  // trailing bytes after the JSON
        if let sinkError { throw SinkFailure(error: sinkError) }
        if overflow || bytes != limit {
            sizeMismatch(entry.name, bytes: overflow ? nil : bytes, limit: limit, into: &findings)
        } else {
            try sinking { try sink?.finish() }
        }
        return index
    }

    /// An entry that inflated to `bytes` (nil: more than `limit`) though it declares `limit`.
    private func sizeMismatch(_ entryName: String, bytes: Int64?, limit: Int64, into findings: inout Findings) {
        findings.adopt([ContentDamage.sizeMismatch(zip: path, entry: entryName, bytes: bytes, limit: limit)])
    }
}
