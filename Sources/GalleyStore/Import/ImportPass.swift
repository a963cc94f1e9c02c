import Foundation
import GalleyCore
import GalleyFormats
import GalleyKit

/// The content pass every backend's import runs once the gate has passed and the versions say
/// go: every file inflated into `staging/<token>/`, hashed and checked as it passes, while a
/// second thread keeps a copy of the zip (`staging/<token>.zip`) for the package feed. Neither
/// touches the database, the issues' files or the kept zips: a zip the pass refuses leaves the
/// store as it was, and this removes what it staged before it throws.
package struct ImportPass {
    /// Names this import's staging: `<pid>-<random>`.
    package let token: String
    /// The inflated files (an import moves them on, or `cleanUp` removes them).
    package let staging: URL
    /// The pass's warnings (its errors refused the zip).
    package let warnings: [Diagnostic]
    /// The kept zip in staging, with its SHA-256 and size.
    package let kept: (staged: URL, digest: FileDigest)
    /// Every file written, with its size and SHA-256.
    package let files: Files

    package static func run(
        _ path: String, _ passed: ImportGate.Passed, stagingFolder: URL, root: URL, progress: ((Int64, Int64) -> Void)?
    ) throws -> ImportPass {
        try extract(path, total: passed.declaredBytes, files: passed.fileCount, identity: passed.identity, adoptable: passed.adoptable,
                    stagingFolder: stagingFolder, root: root, progress: progress) { sink in
            (try refusingErrors(passed.takeCheck().checkContent(sink: sink)), ())
        }.pass
    }

    /// The pass with latest.json's checks beside it (`ZipOpening.checkBeside`), for a zip whose
    /// container passed `ImportGate.open` (`Opened.takeOpening`): every check of `galley validate` runs here, and any
    /// error (latest.json's too) refuses the zip with nothing left in staging. Returns the
    /// issue's own fields from latest.json with the pass. `articles` is handed each article as
    /// latest.json's checks pass it, on their thread (the SQLite store writes its rows from them
    /// meanwhile, `BesideRows`).
    package static func run(
        _ path: String, _ opened: ImportGate.Opened, stagingFolder: URL, root: URL, progress: ((Int64, Int64) -> Void)?,
        articles: Validator.ArticleObserver? = nil, ledger: FileLedger = FileLedger()
    ) throws -> (pass: ImportPass, issue: IssueRecord) {
        // latest.json is written from its checks' thread as they inflate it (`ManifestFileSink`),
        // so the bar counts the other files' bytes.
        let (pass, issue) = try extract(path, total: opened.facts.declaredBytes - opened.manifestBytes, files: opened.facts.fileCount,
                                        identity: opened.facts.identity, adoptable: opened.adoptable, stagingFolder: stagingFolder,
                                        root: root, progress: progress, ledger: ledger) { sink in
            let (findings, issue) = try opened.takeOpening().checkBeside(sink: sink, manifestSink: try sink.fileBeside(),
                                                                        articles: articles)
            let warnings = try refusingErrors(findings)
            guard let issue else {
                throw GalleyError("the zip's latest.json cannot be read", id: .inputUnreadable, path: path, hint: "Run `galley validate` on it.")
            }
            return (warnings, issue)
        }
        return (pass, issue)
    }

    /// Where the kept zip's copy is hashed.
    package enum CopyHashing: Equatable {
        /// On the pass's hashing thread, paired with the files' bytes (two streams on one core
        /// at up to twice the speed of one): where the CPU gains by it (`SHA256Hasher.pairingPays`).
        case pairedWithFiles
        /// On the pass's hashing thread, in the gaps the files leave (see `HashingThread`).
        case inTheFilesGaps
        /// On the copy's own thread.
        case onItsOwnThread

        /// The way for an import whose files hold `total` bytes. Where pairing does not pay, a
        /// pass that writes into memory is short and busy and leaves few gaps: the copy was then
        /// hashed after it, one stream on one core, while the other idled. A pass that waits on
        /// the disk leaves gaps, and a third busy thread would take the inflating thread's core.
        /// Hence `inGapsFrom`: on a 2-core machine whose SHA unit does not pair, the copy's own
        /// thread was a fifth quicker for the 190 MB issue of `bench/import_bench.py` and the
        /// gaps slightly quicker only from about 1 GiB.
        package static func of(total: Int64, pairingPays: Bool = SHA256Hasher.pairingPays) -> CopyHashing {
            if pairingPays { return .pairedWithFiles }
            return total >= inGapsFrom ? .inTheFilesGaps : .onItsOwnThread
        }

        package static let inGapsFrom: Int64 = 1 << 30
    }

    /// Staging, the extracting sink and the kept zip's copy around `check`, which runs the
    /// content pass through the sink and returns its warnings (its errors refuse the zip).
    ///
    /// The directory, the pass and the copy each open the zip by its path: should the path name
    /// another file by the end (a zip written anew and renamed over it), or the file have been
    /// written to (`identity`), what was checked, what was extracted and what is kept for the
    /// feed might be three different zips, and the import is refused. A zip the store vouched
    /// for (`adoptable`, its own download) is not compared: linking it moves its change time.
    private static func extract<Extra>(
        _ path: String, total: Int64, files: Int, identity: FileIdentity?, adoptable: FileDigest?, stagingFolder: URL, root: URL,
        progress: ((Int64, Int64) -> Void)?, ledger: FileLedger = FileLedger(),
        check: (ExtractingSink) throws -> (warnings: [Diagnostic], extra: Extra)
    ) throws -> (pass: ImportPass, extra: Extra) {
        let token = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let staging = stagingFolder.appending(path: token)
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        var succeeded = false
        defer { if !succeeded { try? FolderRemoval.remove(staging.path) } }
        let copyHashing = CopyHashing.of(total: total)
        let sink = try ExtractingSink(root: staging, total: total, files: files, ledger: ledger,
                                      pairs: copyHashing == .pairedWithFiles, progress: progress)
        // Once the pass has ended, the copy is all the import waits for: from a slow disk the
        // rest of it goes to the page cache instead; a pass that refused the zip stops it.
        let urgency = CopyUrgency()
        // The copy is hashed as `copyHashing` says; once the pass has ended it goes on alone.
        let hashing = sink.hashing
        let beside = copyHashing == .onItsOwnThread ? nil : hashing
        let (pass, keeping) = alongside({
            try stagePackage(path, token: token, adoptable: adoptable, stagingFolder: stagingFolder, root: root, urgency: urgency,
                             hashingBeside: beside)
        }) {
            defer { hashing.endFiles() }
            do {
                let checked = try check(sink)
                urgency.raise()
                return checked
            } catch {
                urgency.abandon()
                throw error
            }
        }
        do {
            let (warnings, extra) = try pass.get()
            let kept = try keeping.get()
            if adoptable == nil, let identity, FileIdentity(path: path) != identity {
                throw GalleyError("the zip changed while it was imported (written to, removed, or another file put in its place)",
                                  id: .inputUnreadable, path: path,
                                  hint: "Import it again once whatever writes it has finished; the store is as it was.")
            }
            succeeded = true
            return (ImportPass(token: token, staging: staging, warnings: warnings, kept: kept, files: sink.files()), extra)
        } catch {
            if case .success(let kept) = keeping { try? FileManager.default.removeItem(at: kept.staged) }
            throw error
        }
    }

    /// Removes what is still staged (nothing once an import moved it all on).
    package func cleanUp() {
        try? FolderRemoval.remove(staging.path)
        try? FileManager.default.removeItem(at: kept.staged)
    }

    package init(token: String, staging: URL, warnings: [Diagnostic], kept: (staged: URL, digest: FileDigest), files: Files) {
        self.token = token
        self.staging = staging
        self.warnings = warnings
        self.kept = kept
        self.files = files
    }
}

// The pieces of the pass, shared by every backend.
extension ImportPass {
    /// Why the feed must not serve a zip that passed the gate, or nil: an older Linechef format
    /// (tolerated by import, a crash in current Dumpling builds).
    package static func withheldReason(_ warnings: [Diagnostic]) -> String? {
        guard warnings.contains(where: { $0.id == Check.manifestOlderFormat.id }) else { return nil }
        return "older Linechef format (manifest.older-format): current Dumpling builds crash on it"
    }

    /// Copies the zip into staging and hashes the copy (`staging/<token>.zip`); the backend
    /// moves it to its content-addressed name once the import's checks have passed, so a
    /// refused zip never reaches the kept zips. A zip the caller vouched for (`adoptable`: the
    /// store's own download, hashed as it arrived) is linked there instead, when it has the
    /// digest's size and the link can be made: for a 190 MB package, 0.06 s of copying, 0.11 s
    /// of hashing and a third copy of it on the disk while it is imported.
    ///
    /// It takes no store, so the thread it runs on holds no reference to one: a store still held when
    /// the process exits never closes its connections, and its write-ahead log is then left
    /// unmerged.
    ///
    /// `hashingBeside`: the pass's hashing thread, to hash the copy on (paired with the files,
    /// or in their gaps); without it the copy's own thread hashes it.
    package static func stagePackage(
        _ path: String, token: String, adoptable: FileDigest? = nil, stagingFolder: URL, root: URL, urgency: CopyUrgency? = nil,
        hashingBeside hashing: HashingThread? = nil
    ) throws -> (staged: URL, digest: FileDigest) {
        let staged = stagingFolder.appending(path: "\(token).zip")
        if let adoptable, link(path, staged.path) == 0 {
            // link(2) names a symbolic link itself, not its target: only a plain file is kept.
            if let status = FileStatus(staged.path, follow: false), status.kind == .file, status.size == adoptable.size {
                return (staged, adoptable)
            }
            // Not the file that was vouched for: keep a copy, hashed, as for any zip.
            unlink(staged.path)
        }
        do {
            return (staged, try FileDigest.of(path, copyingTo: staged.path, urgency: urgency, hashingBeside: hashing))
        } catch let error as FileDigestError {
            try? FileManager.default.removeItem(at: staged)
            throw GalleyError("cannot keep the zip in the store: \(error)", id: .storeFailed, path: root.path,
                              hint: "Check the free space and permissions of the store's folder.")
        }
    }

    /// The warnings among a content pass's findings; its errors refuse the zip.
    package static func refusingErrors(_ findings: [Diagnostic]) throws -> [Diagnostic] {
        let errors = findings.filter { $0.severity == .error }
        if !errors.isEmpty { throw DiagnosticsError(errors) }
        return findings.filter { $0.severity == .warning }
    }

    /// Reports the bytes a content pass has read, of all it will read: the progress bar of a
    /// pass that writes nothing, and of the extracting one.
    package final class ProgressSink: ZipEntrySink {
        private let total: Int64
        private let report: (Int64, Int64) -> Void
        private var done: Int64 = 0

        package init(total: Int64, _ report: @escaping (Int64, Int64) -> Void) {
            self.total = total
            self.report = report
        }

        package func begin(_ name: Substring, size: Int64) {}
        package func write(_ chunk: ArraySlice<UInt8>) {
            done += Int64(chunk.count)
            report(done, total)
        }
        package func finish() {}
    }

    /// The files a pass wrote, each made when it is read from the pass's own lists: a list
    /// of 60,000 made at once (a name string each) was 7 MB of an import's peak. The names are
    /// `PackedStrings`: kept as slices of the zip directory's names, they held all of those
    /// (4.8 MB at 30,000 articles, with the folder's name in each) alive through the rows.
    package struct Files: RandomAccessCollection {
        fileprivate var names = PackedStrings()
        fileprivate var sizes: [Int64] = []
        fileprivate var digests: [SHA256Digest] = []

        package var startIndex: Int { 0 }
        package var endIndex: Int { Swift.min(names.count, digests.count) }
        package subscript(position: Int) -> ExtractedFile {
            ExtractedFile(name: names[position], size: sizes[position], digest: digests[position])
        }

        package init(sizes: [Int64] = [], digests: [SHA256Digest] = []) {
            self.sizes = sizes
            self.digests = digests
        }
    }

    package struct ExtractedFile {
        package var name: String
        package var size: Int64
        package var digest: SHA256Digest
        /// The SHA-256 as hex, made when a row or blob needs it.
        package var sha256: String { digest.hex }

        package init(name: String, size: Int64, digest: SHA256Digest) {
            self.name = name
            self.size = size
            self.digest = digest
        }
    }

    /// Writes each file the content pass inflates under the staging folder, streaming, and
    /// hashes it (SHA-256) on a second thread as it passes, through `SecureDiskWriter` (libarchive's
    /// secure extraction guarantees: no `..`, no path through a link, never over a file already
    /// written). Validate refused unsafe names, links, devices and collisions before;
    /// this is the second line.
    package final class ExtractingSink: ZipEntrySink {
        private let writer: SecureDiskWriter
        private let progress: ProgressSink?
        /// Hashes the files written, and the kept zip beside them (`stagePackage`).
        package let hashing: HashingThread
        private var current: (name: Substring, size: Int64)?
        /// The files written and hashed so far.
        private let ledger: FileLedger

        /// `files`: how many files the zip declares, so the lists are made at their final size.
        /// `pairs`: whether a copy lane opened on its hashing thread pairs the copy with the files.
        package init(root: URL, total: Int64, files: Int, ledger: FileLedger, pairs: Bool, progress: ((Int64, Int64) -> Void)?) throws {
            writer = try SecureDiskWriter(root: root)
            ledger.reserveCapacity(files)
            self.ledger = ledger
            hashing = HashingThread(pairs: pairs, deliver: { ledger.hashed($0) })
            self.progress = progress.map { ProgressSink(total: total, $0) }
        }

        /// The hashing thread keeps the chunks it has not hashed yet, as they were handed over.
        package var keepsChunks: Int { hashing.keeps }

        package func begin(_ name: Substring, size: Int64) throws {
            try writer.begin(String(name), size: size)
            hashing.begin()
            current = (name, 0)
        }

        package func write(_ chunk: ArraySlice<UInt8>) throws {
            hashing.update(chunk)
            try writer.write(chunk)
            current?.size += Int64(chunk.count)
            progress?.write(chunk)
        }

        package func finish() throws {
            try writer.finish()
            hashing.end()
            if let current { ledger.wrote(current.name, size: current.size) }
            current = nil
        }

        /// A sink for latest.json, written on its checks' thread into the same folder; `files`
        /// lists it after the rest, once the pass has ended.
        package func fileBeside() throws -> ManifestFileSink {
            let sink = try ManifestFileSink(root: writer.root)
            beside = sink
            return sink
        }
        private var beside: ManifestFileSink?

        /// Every file written, with its digest (waits for the hashing thread), the one written
        /// beside the pass last (its row after the others': `BesideRows` may have taken the first
        /// ones already).
        package func files() -> Files {
            hashing.finish()
            if let file = beside?.written {
                ledger.wrote(file.name, size: file.size)
                ledger.hashed(file.digest)
                beside = nil
            }
            return ledger.files
        }
    }

    /// latest.json written and hashed on its checks' thread as they read it
    /// (`ZipOpening.checkBeside`'s `manifestSink`): one file, into the pass's staging folder.
    /// `written` is read once the pass has ended.
    package final class ManifestFileSink: ZipEntrySink, @unchecked Sendable {
        // @unchecked: used by the checks' thread alone until the pass ends (which the thread
        // that reads `written` waits for).
        private let writer: SecureDiskWriter
        private var hasher = SHA256Hasher()
        /// The file begun, with its declared size: `finish` comes only once that many bytes came.
        private var current: (name: Substring, size: Int64)?
        private(set) var written: (name: Substring, size: Int64, digest: SHA256Digest)?

        package init(root: String) throws {
            writer = try SecureDiskWriter(root: URL(fileURLWithPath: root))
        }

        package func begin(_ name: Substring, size: Int64) throws {
            try writer.begin(String(name), size: size)
            hasher = SHA256Hasher()
            current = (name, size)
        }

        package func write(_ chunk: ArraySlice<UInt8>) throws {
            chunk.withUnsafeBytes { hasher.update($0) }
            try writer.write(chunk)
        }

        package func finish() throws {
            try writer.finish()
            if let current { written = (current.name, current.size, hasher.finalize()) }
            current = nil
        }
    }

    /// The files a pass wrote and the digests of those hashed so far, in order, shared by the
    /// pass (names and sizes), the hashing thread (digests) and a reader that takes each file as
    /// soon as it is both (`BesideRows` writes their rows while the pass runs on).
    package final class FileLedger: @unchecked Sendable {
        // `written` and `takenCount` are read and changed under `lock` only.
        private let lock = NSLock()
        private var written = Files()

        package init() {}

        package func reserveCapacity(_ count: Int) {
            lock.withLock {
                written.names.reserveCapacity(count)
                written.sizes.reserveCapacity(count)
                written.digests.reserveCapacity(count)
            }
        }

        package func wrote(_ name: Substring, size: Int64) {
            lock.withLock {
                written.names.append(name)
                written.sizes.append(size)
            }
        }

        package func hashed(_ digest: SHA256Digest) { lock.withLock { written.digests.append(digest) } }

        /// How many files `take` has handed out: the first ones, in order.
        package var taken: Int { lock.withLock { takenCount } }
        private var takenCount = 0

        /// The next files both written and hashed that `take` has not handed out yet, at most
        /// `limit` of them.
        package func take(limit: Int) -> [ExtractedFile] {
            lock.withLock {
                let end = min(written.endIndex, takenCount + limit)
                guard takenCount < end else { return [] }
                defer { takenCount = end }
                return Array(written[takenCount..<end])
            }
        }

        /// Every file written and hashed.
        package var files: Files { lock.withLock { written } }
    }
}
