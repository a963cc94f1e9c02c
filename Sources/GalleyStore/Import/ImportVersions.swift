import Foundation
import GalleyCore
import GalleyFormats
import GalleyKit

/// The version rule every backend applies to an import: a newer `last_updated` replaces, the
/// same one is a no-op (unless the content differs), an older one is refused; `--force`
/// replaces whatever is there.
package enum ImportVersions {
    /// What the store holds of the issue a zip brings (found by global id or apple_id).
    package struct Stored {
        package var appleID: String
        package var lastUpdated: String
        package var lastUpdatedMS: Int64?
        package var contentDigest: String?

        package init(appleID: String, lastUpdated: String, lastUpdatedMS: Int64? = nil, contentDigest: String? = nil) {
            self.appleID = appleID
            self.lastUpdated = lastUpdated
            self.lastUpdatedMS = lastUpdatedMS
            self.contentDigest = contentDigest
        }
    }

    /// What an import of `passed` does against `stored` (nil: the store lacks the issue).
    package enum Decision {
        /// Not in the store: import it.
        case add
        /// An older version (or `--force`): replace it.
        case replace
        /// The same version with the same content: nothing to write; the zip was still checked
        /// whole, as `galley validate` would, and these are its warnings.
        case unchanged(warnings: [Diagnostic])

        /// What the import's result says when it writes: nil when it changes nothing.
        package var status: ImportResult.Status? {
            switch self {
            case .add: .imported
            case .replace: .replaced
            case .unchanged: nil
            }
        }

        /// The warnings of the checks run for an unchanged zip (none otherwise).
        package var warnings: [Diagnostic] {
            if case .unchanged(let warnings) = self { warnings } else { [] }
        }
    }

    /// Decides, and refuses an older zip or the same version with other content. A zip that would
    /// change nothing (or roll the issue back) is still checked whole, but not extracted.
    package static func decide(
        _ stored: Stored?, _ passed: ImportGate.Passed, path: String, force: Bool, progress: ((Int64, Int64) -> Void)?
    ) throws -> Decision {
        try decide(stored, issue: passed.issue, contentDigest: passed.contentDigest, path: path, force: force) {
            try ImportPass.refusingErrors(passed.takeCheck().checkContent(
                sink: progress.map { ImportPass.ProgressSink(total: passed.declaredBytes, $0) }))
        }
    }

    /// The rule itself, for a zip with these fields; `checked` runs the checks still to run on a
    /// zip that will not be extracted (nothing when they ran already) and returns their warnings.
    package static func decide(
        _ stored: Stored?, issue: IssueRecord, contentDigest: String, path: String, force: Bool, checked: () throws -> [Diagnostic]
    ) throws -> Decision {
        guard let stored else { return .add }
        if force { return .replace }
        switch order(stored, issue) {
        case .orderedSame:
            let warnings = try checked()
            if let digest = stored.contentDigest, digest != contentDigest {
                throw sameVersionChanged(stored, issue, path: path)
            }
            return .unchanged(warnings: warnings)
        case .orderedAscending:
            _ = try checked()
            throw older(stored, issue, path: path)
        case .orderedDescending:
            return .replace
        }
    }

    /// How the zip's `last_updated` compares with the stored one: by instant when both parse,
    /// else as text.
    package static func order(_ stored: Stored, _ issue: IssueRecord) -> ComparisonResult {
        if let oldMS = stored.lastUpdatedMS, let newMS = ISODateTime(parsing: issue.lastUpdated)?.millisecondsSinceEpoch {
            return newMS == oldMS ? .orderedSame : newMS > oldMS ? .orderedDescending : .orderedAscending
        }
        let oldText = stored.lastUpdated
        return issue.lastUpdated == oldText ? .orderedSame : issue.lastUpdated > oldText ? .orderedDescending : .orderedAscending
    }

    /// The stored issue, named as the store knows it (it may share only the global id).
    package static func storedName(_ stored: Stored, _ issue: IssueRecord) -> String {
        stored.appleID == issue.appleID ? "`\(issue.appleID)`"
            : "`\(stored.appleID)` (the same global id, \(issue.globalID), as this zip's `\(issue.appleID)`)"
    }

    /// The refusal of a zip with the stored `last_updated` but other content.
    package static func sameVersionChanged(_ stored: Stored, _ issue: IssueRecord, path: String) -> DiagnosticsError {
        DiagnosticsError([Diagnostic(
            .importSameVersionChanged,
            "the store has \(storedName(stored, issue)) with the same last_updated (\(DumplingDate.rfc3339(issue.lastUpdated))) but other content than this zip",
            at: SourceLocation(path: path),
            hint: "Bump last_updated in the issue's source (or pack with --bump) so that apps see a new version; --force replaces it without one.")])
    }

    /// The refusal of a zip older than the stored issue.
    package static func older(_ stored: Stored, _ issue: IssueRecord, path: String) -> DiagnosticsError {
        DiagnosticsError([Diagnostic(
            .importOlder,
            "the store has a newer version of \(storedName(stored, issue)) (last updated \(DumplingDate.rfc3339(stored.lastUpdated))) than this zip (\(DumplingDate.rfc3339(issue.lastUpdated)))",
            at: SourceLocation(path: path), hint: "Pass --force to replace it anyway.")])
    }
}
