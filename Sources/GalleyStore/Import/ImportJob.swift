import Foundation
import GalleyCore
import GalleyFormats
import GalleyKit

/// One zip's import, from the gate to the commit. `open` runs the container checks (a zip they
/// refuse never opens a store); `run(into:)`, which each store's `IssueStore.importZip(_:)`
/// calls, runs the rest of validate's checks once (beside the pass that stages the files where
/// the store asks for it, else first), decides the versions against what the store holds, and
/// hands the store what the pass staged to commit. The job owns its input throughout: its path,
/// its options, and what each check read, handed to the next step once and dropped; a store
/// never opens the zip. A job runs once; importing the same zip again takes a new job.
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

extension ImportJob {
    /// Runs the job into `target`'s store: latest.json's checks beside the pass or first (as
    /// `target.checksBeside` says), the version rule on what the store holds, then the pass and
    /// the store's commit, all but the first checks under the store's writer lock. A zip any
    /// check or the rule refuses leaves the store as it was (the pass removes what it staged).
    package func run<Target: ImportTarget>(into target: Target) throws -> ImportResult {
        guard try target.checksBeside(self) else { return try runChecksFirst(into: target) }
        var result = try target.withImportSession(self) { session in
            let beside = session.observeArticles()
            let (pass, issue) = try ImportPass.run(path, opened, stagingFolder: session.stagingFolder, root: session.root,
                                                   progress: progress, articles: beside?.observer,
                                                   ledger: beside?.files ?? ImportPass.FileLedger())
            session.articlesEnded()
            defer { pass.cleanUp() }
            let held = try session.held(issue)
            // The checks all ran in the pass.
            let decision = try ImportVersions.decide(held?.versions, issue: issue, contentDigest: opened.facts.contentDigest,
                                                     path: path, force: force, checked: { [] })
            guard let status = decision.status else {
                return try session.unchanged(held?.held, issue: issue, path: path, files: opened.facts.fileCount, warnings: pass.warnings)
            }
            return try session.commit(StagedImport(pass: pass, issue: issue, contentDigest: opened.facts.contentDigest,
                                                   withheld: ImportPass.withheldReason(pass.warnings), status: status, path: path),
                                      replacing: held?.held)
        }
        result.warnings = warnings + result.warnings
        return result
    }

    /// latest.json's checks before the lock, then the versions, which refuse an older zip (or
    /// change nothing) before a file is extracted, then the pass.
    private func runChecksFirst<Target: ImportTarget>(into target: Target) throws -> ImportResult {
        let passed = try checkHead()
        let issue = passed.issue
        var result = try target.withImportSession(self) { session in
            let held = try session.held(issue)
            let decision = try ImportVersions.decide(held?.versions, passed, path: path, force: force, progress: progress)
            guard let status = decision.status else {
                return try session.unchanged(held?.held, issue: issue, path: path, files: passed.fileCount, warnings: decision.warnings)
            }
            let pass = try ImportPass.run(path, passed, stagingFolder: session.stagingFolder, root: session.root, progress: progress)
            defer { pass.cleanUp() }
            return try session.commit(StagedImport(pass: pass, issue: issue, contentDigest: passed.contentDigest,
                                                   withheld: ImportPass.withheldReason(passed.warnings), status: status, path: path),
                                      replacing: held?.held)
        }
        result.warnings = passed.warnings + result.warnings
        return result
    }
}

/// A store's side of an import (`ImportJob.run(into:)`): which way the job checks, and a session
/// under the store's writer lock in which the job asks what the store holds and hands it what
/// it staged.
package protocol ImportTarget {
    associatedtype Session: ImportSession

    /// Whether latest.json's checks run beside the pass that extracts the files (else first).
    /// Asked before the writer lock is taken.
    func checksBeside(_ job: ImportJob) throws -> Bool

    /// Runs `body` under the store's writer lock.
    func withImportSession<T>(_ job: ImportJob, _ body: (Session) throws -> T) throws -> T
}

/// One import under a store's writer lock (`ImportTarget.withImportSession`).
package protocol ImportSession {
    /// What the store holds of an issue, as its commit needs it to replace the issue.
    associatedtype Held

    /// Where the pass stages the files and the kept zip.
    var stagingFolder: URL { get }
    /// The store's folder (a zip the store vouched for is linked from there).
    var root: URL { get }

    /// What the pass hands each article to as latest.json's checks pass it, and the ledger of
    /// its files, for a store that writes the rows beside the pass (the job asks only when the
    /// checks run beside it); nil: the store writes them at the commit.
    func observeArticles() -> (observer: Validator.ArticleObserver, files: ImportPass.FileLedger)?
    /// Told once the pass has handed over every article.
    func articlesEnded()

    /// The stored issue a zip with these fields would replace (the same global id or apple_id),
    /// with its versions as the rule reads them.
    func held(_ issue: IssueRecord) throws -> (held: Held, versions: ImportVersions.Stored)?
    /// What an import that changes nothing answers: the held issue's counts and package.
    func unchanged(_ held: Held?, issue: IssueRecord, path: String, files: Int, warnings: [Diagnostic]) throws -> ImportResult
    /// Commits what the job staged, replacing `held`. The result's warnings are the pass's.
    func commit(_ staged: StagedImport, replacing held: Held?) throws -> ImportResult
}

extension ImportSession {
    package func observeArticles() -> (observer: Validator.ArticleObserver, files: ImportPass.FileLedger)? { nil }
    package func articlesEnded() {}
}

/// What an import job hands its store to commit: what the pass staged and what the checks read.
package struct StagedImport {
    /// The staged files and the kept zip (the job removes what the commit did not move on).
    package let pass: ImportPass
    /// The issue's own fields, from latest.json.
    package let issue: IssueRecord
    /// The zip's content digest (its central directory's entries).
    package let contentDigest: String
    /// Why the feed must not serve the zip, or nil (`ImportPass.withheldReason`).
    package let withheld: String?
    /// `.imported` or `.replaced`.
    package let status: ImportResult.Status
    /// The zip, as the result names it.
    package let path: String
}

extension IssueStore {
    /// Imports the zip at `path` as one job (`ImportJob.open`, then `importZip(_:)`).
    public func importZip(_ path: String, force: Bool = false) throws -> ImportResult {
        try importZip(ImportJob.open(path).forcing(force))
    }
}
