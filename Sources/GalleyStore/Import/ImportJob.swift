import Foundation
import GalleyCore
import GalleyFormats
import GalleyKit

/// One zip's import, from the gate to the commit. `open` runs the container checks (a zip they
/// refuse never opens a store); the store's one entry point, `IssueStore.importZip(_:)`, runs
/// the rest of validate's checks once (beside the pass that stages the files where the backend
/// can, else first) and commits what the pass staged. The job owns its input throughout: its
/// path, its options, and what each check read, handed to the next step once and dropped. A job
/// runs once; importing the same zip again takes a new job.
public struct ImportJob {
    /// The zip.
    public let path: String
    /// Replace the stored issue whatever its version.
    public private(set) var force = false
    /// Bytes extracted so far and in all, for a progress bar.
    public private(set) var progress: ((Int64, Int64) -> Void)?
    /// Whether the rest of the checks run before the pass, whatever the backend could do.
    public private(set) var checksFirst = false
    /// What the container checks passed.
    package let opened: ImportGate.Opened

    /// Runs the container checks on `path` (the central directory; no content read). Throws
    /// `DiagnosticsError` for a zip they refuse, `GalleyError` for a path that is not a zip.
    public static func open(_ path: String) throws -> ImportJob {
        ImportJob(path: path, opened: try ImportGate.open(path))
    }

    /// What the container checks warned about.
    public var warnings: [Diagnostic] { opened.warnings }

    /// This job replacing the stored issue whatever its version (`galley import --force`).
    public func forcing(_ force: Bool = true) -> ImportJob {
        var job = self
        job.force = force
        return job
    }

    /// This job reporting its bytes to `progress`.
    public func reporting(_ progress: ((Int64, Int64) -> Void)?) -> ImportJob {
        var job = self
        job.progress = progress
        return job
    }

    /// This job with the rest of the checks run before the pass (the PostgreSQL store's way,
    /// which every backend must decide alike; the tests compare the two).
    public func checkingFirst() -> ImportJob {
        var job = self
        job.checksFirst = true
        return job
    }

    /// This zip, vouched for as the store's own file with `digest` (`ImportGate.Opened.adopting`).
    public func adopting(_ digest: FileDigest) -> ImportJob {
        ImportJob(copying: self, opened: opened.adopting(digest))
    }

    /// This zip, its articles' rows written beside the pass as `policy` says.
    public func withRowsBeside(_ policy: ImportGate.RowsBeside) -> ImportJob {
        ImportJob(copying: self, opened: opened.withRowsBeside(policy))
    }

    /// latest.json's checks and the references, on what `open` read, for a backend that runs
    /// them before its pass. The result's warnings are the container's and these.
    package func checkHead() throws -> ImportGate.Passed {
        var passed = try ImportGate.check(opened)
        passed.warnings = opened.warnings + passed.warnings
        return passed
    }

    private init(path: String, opened: ImportGate.Opened) {
        self.path = path
        self.opened = opened
    }

    private init(copying job: ImportJob, opened: ImportGate.Opened) {
        (path, force, progress, checksFirst) = (job.path, job.force, job.progress, job.checksFirst)
        self.opened = opened
    }
}

extension IssueStore {
    /// Imports the zip at `path` as one job (`ImportJob.open`, then `importZip(_:)`).
    public func importZip(_ path: String, force: Bool = false) throws -> ImportResult {
        try importZip(ImportJob.open(path).forcing(force))
    }
}
