import Foundation
import GalleyCore
import GalleyFormats
import GalleyKit

/// What every backend runs on a zip before its store is opened: validate's full check, with the
/// older Linechef formats relaxed to warnings. A zip it refuses never touches a store.
public enum ImportGate {
    /// Checks `galley validate` makes that the store relaxes to warnings: the older Linechef
    /// formats (legacy `metadata` without `meta`/`customMeta`, no `author_bio` or
    /// `date_last_updated`) crash newer Dumpling builds, but the store reads them safely.
    public static let toleratedOnImport: [Check] = [.manifestOlderFormat]

    /// The zips `paths` name, as `galley validate` reads them: a folder of zips stands for its
    /// zips (sorted by name); anything else is passed on for `check` to judge.
    public static func zips(_ paths: [String]) -> [String] {
        paths.flatMap { path -> [String] in
            if case .zipFolder(let zips)? = try? IssueInput.detect(path) { return zips }
            return [path]
        }
    }

    /// The container, manifest and reference checks of `galley validate` (the central directory
    /// and latest.json; no media read): any error refuses the zip. Call it before opening the
    /// store, so a refused zip never touches it. Returns what passed: the warnings, for the caller
    /// to show, and what was read, so the import reads neither again.
    /// Throws `GalleyError` (could not run) when `path` is not a zip at all: missing, a special
    /// file (which would block the read), a source folder, a folder of zips or a bare manifest.
    @discardableResult
    public static func check(_ path: String) throws -> Passed {
        let opened = try open(path)
        var passed = try check(opened)
        passed.warnings = opened.warnings + passed.warnings
        return passed
    }

    /// The container checks alone (the central directory; no content read): any error refuses
    /// the zip before a store is opened. What passed is an `ImportJob`'s: the store checks latest.json beside the pass that
    /// extracts the files (`ZipOpening.checkBeside`), or first, with `check(_: Opened)`. Throws as `check`.
    public static func open(_ path: String) throws -> Opened {
        try requireZip(path)
        let (report, opening) = validator.openZipForImport(path: path)
        let errors = report.diagnostics.filter { $0.severity == .error }
        if !errors.isEmpty { throw DiagnosticsError(errors) }
        guard let opening else {
            throw GalleyError("the zip's central directory cannot be read", id: .inputUnreadable, path: path, hint: "Run `galley validate` on it.")
        }
        return Opened(warnings: report.diagnostics.filter { $0.severity == .warning }, opening: opening, path: path)
    }

    /// latest.json's checks and the references on a zip `open` passed (its central directory is
    /// not read again): any error refuses it. The `Passed`'s warnings are these checks' only;
    /// `opened` keeps the container's.
    package static func check(_ opened: Opened) throws -> Passed {
        let (diagnostics, check) = try opened.takeOpening().checkHead()
        let errors = diagnostics.filter { $0.severity == .error }
        if !errors.isEmpty { throw DiagnosticsError(errors) }
        guard let check else {
            throw GalleyError("the zip's latest.json cannot be read", id: .inputUnreadable, path: opened.path, hint: "Run `galley validate` on it.")
        }
        return Passed(warnings: diagnostics.filter { $0.severity == .warning }, check: check, facts: opened.facts, path: opened.path,
                      adoptable: opened.adoptable)
    }

    /// A job's checks asked for a second time: a mistake in the caller, said as one.
    static func ranTwice(_ path: String) -> GalleyError {
        GalleyError("this import of \(path) has already run", id: .usage, path: path,
                    hint: "Open a new import job (`ImportJob.open`) for each import of a zip.")
    }

    /// Validate with the older Linechef formats relaxed to warnings.
    private static var validator: Validator {
        var options = ValidationOptions()
        for check in toleratedOnImport { options.configuration.settings[check.id] = .warning }
        return Validator(options: options)
    }

    /// Throws unless `path` is a zip (see `check`).
    private static func requireZip(_ path: String) throws {
        switch try IssueInput.detect(path) {
        case .zip: break
        case .source:
            throw GalleyError("an issue source folder, not an issue zip", id: .inputKind, path: path,
                              hint: "Pack it first (`galley pack \(path) --output dist/`), then import the zip.")
        case .zipFolder:
            throw GalleyError("a folder of zips, not an issue zip", id: .inputKind, path: path, hint: "Name the zips: `galley import \(path)/*.zip`.")
        case .manifest:
            throw GalleyError("a latest.json, not an issue zip", id: .inputKind, path: path, hint: "Import the issue zip that holds it.")
        }
    }

    /// When the SQLite store writes an import's article rows beside its content pass
    /// (`BesideRows`: latest.json's checks hand each article to a transaction on a thread of its
    /// own) rather than after it. Beside is faster for an issue whose latest.json is large
    /// against its files (30,000 articles with small images: 5.4 s against 6.1 s) and slower for
    /// the others, and the rows' memory comes on top of the pass's peak: `galley import`, whose
    /// process holds nothing else, asks for `whenLarge`; `galley sync` and `serve`, which hold an
    /// HTTP client's or server's memory beside the import, leave it at `never` (`galley sync` of
    /// a 30,000-article issue peaked at 66.6 MiB with it, 61.6-62.9 MiB without; the goal is 64).
    /// The PostgreSQL store writes its rows after the pass whatever this says.
    public enum RowsBeside: Sendable {
        /// After the pass, always.
        case never
        /// Beside the pass when that pays (`BesideRows.pays`: latest.json of at least 8 MiB
        /// and a tenth of the files).
        case whenLarge
        /// Beside the pass whatever the sizes (for the tests, which compare both ways on
        /// small zips).
        case always
    }

    /// A zip whose container passed `open`: what the import needs before latest.json is read.
    public struct Opened: Sendable {
        /// What the container checks warned about.
        public var warnings: [Diagnostic]
        /// The files, their digest and size, from the central directory.
        package let facts: Facts
        /// The zip's top folder (its apple_id, once latest.json's checks agree).
        package let folder: String
        /// Whether the rest of the checks can run beside an extracting pass: latest.json is
        /// the first entry (else the import runs `check` and the pass in turn).
        package let checksBeside: Bool
        /// latest.json's declared size when it is the first entry (0 otherwise).
        package let manifestBytes: Int64
        package let path: String
        /// The zip's digest, when the zip is the store's own file that nothing else writes (a
        /// download `galley sync` hashed as it arrived and checked against its feed): the
        /// import then keeps it by a second name (a hard link) instead of copying and hashing it
        /// again. Set with `adopting(_:)`.
        public private(set) var adoptable: FileDigest?
        /// When the SQLite store writes the articles' rows beside the pass (`RowsBeside`; see
        /// there why only `galley import` asks for them). Set with `withRowsBeside(_:)`.
        public private(set) var rowsBeside = RowsBeside.never
        /// What the rest of the checks need (the central directory, the file list), for the one
        /// step that runs them, which takes it: the caller keeps its `Opened` through the whole
        /// import, and the directory's entries and the file list held while the rows are
        /// written were 5 MB of an import's peak at 30,000 articles.
        private let held: TakeOnce<ZipOpening>

        package init(warnings: [Diagnostic], opening: ZipOpening, path: String) {
            self.warnings = warnings
            facts = Facts(opening.directory)
            folder = opening.directory.topFolder ?? ""
            checksBeside = opening.manifestFirst
            manifestBytes = opening.manifestFirst ? Int64(clamping: opening.directory.entries.first?.uncompressedSize ?? 0) : 0
            self.path = path
            held = TakeOnce(opening)
        }

        /// This zip, vouched for as the store's own file with `digest` (see `adoptable`). The
        /// import still links it only when the file has the digest's size, and copies it when
        /// the link cannot be made (another file system).
        public func adopting(_ digest: FileDigest) -> Opened {
            var opened = self
            opened.adoptable = digest
            return opened
        }

        /// This zip, its articles' rows written beside the pass as `policy` says.
        public func withRowsBeside(_ policy: RowsBeside) -> Opened {
            var opened = self
            opened.rowsBeside = policy
            return opened
        }

        /// The issue's own fields latest.json gives before its articles (`ZipOpening.peekIssue`),
        /// or nil: a hint, nothing checked.
        package func peekIssue() -> IssueRecord? { held.peek { $0.peekIssue() } ?? nil }

        /// What the rest of the checks need, taken once: an import job runs once.
        package func takeOpening() throws -> ZipOpening {
            guard let opening = held.take() else { throw ImportGate.ranTwice(path) }
            return opening
        }
    }

    /// What the central directory says of the files an import stores.
    package struct Facts: Sendable {
        package var fileCount: Int
        package var contentDigest: String
        package var declaredBytes: Int64
        /// The zip as it stood when its directory was read: the import refuses it should the
        /// path name another file, or this one changed, by the end of its pass.
        package var identity: FileIdentity?

        package init(_ directory: ZipDirectory) {
            identity = directory.identity
            let entries = directory.entries
            let files = entries.indices.filter { !entries[$0].isDirectory }
            fileCount = directory.filesInAFolder(files)
            contentDigest = directory.fileLinesDigest(files)
            declaredBytes = Int64(entries.reduce(0) { $0 + $1.uncompressedSize })
        }
    }

    /// A zip that passed the gate.
    public struct Passed: Sendable {
        /// What validate warned about (the import goes ahead).
        public var warnings: [Diagnostic]
        /// The issue's own fields from its latest.json, as the checks read them.
        package let issue: IssueRecord
        /// The files in the issue's folder, as an import stores them.
        package let fileCount: Int
        /// What the zip holds, as one SHA-256: every file's name, CRC-32 and size from the central
        /// directory (validation checked them against the content), in name order. Two zips of
        /// one issue with the same digest carry the same content, whatever their entry times.
        public let contentDigest: String
        /// Bytes the entries declare, for a progress bar.
        package let declaredBytes: Int64
        /// `Opened.adoptable` of the zip this came from.
        package let adoptable: FileDigest?
        /// `Facts.identity` of the zip this came from.
        package let identity: FileIdentity?
        private let path: String
        /// What the checks read (the central directory, latest.json's index), for the one
        /// content pass, which takes it: the caller keeps its `Passed` through the whole import,
        /// and holding the index while the rows are written was a third of an import's memory
        /// at 30,000 articles.
        private let held: TakeOnce<ZipCheck>

        package init(warnings: [Diagnostic], check: ZipCheck, facts: Facts, path: String, adoptable: FileDigest?) {
            self.warnings = warnings
            self.adoptable = adoptable
            issue = check.issue
            (fileCount, contentDigest, declaredBytes) = (facts.fileCount, facts.contentDigest, facts.declaredBytes)
            identity = facts.identity
            self.path = path
            held = TakeOnce(check)
        }

        /// What the content pass needs, taken once: an import job runs once.
        package func takeCheck() throws -> ZipCheck {
            guard let check = held.take() else { throw ImportGate.ranTwice(path) }
            return check
        }
    }
}
