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

    /// The container and manifest checks of `galley validate`: any error refuses the zip. Call it
    /// before opening the store, so a refused zip leaves the store's files exactly as they were.
    /// Returns the warnings, for the caller to show.
    @discardableResult
    public static func check(_ path: String) throws -> [Diagnostic] {
        // The full check (CRCs, real sizes, media): a damaged zip is refused before the store is
        // touched, not half-way through extraction.
        var options = ValidationOptions()
        for check in toleratedOnImport { options.configuration.settings[check.id] = .warning }
        let report = Validator(options: options).validateZip(path: path)
        let errors = report.diagnostics.filter { $0.severity == .error }
        if !errors.isEmpty { throw DiagnosticsError(errors) }
        return report.diagnostics.filter { $0.severity == .warning }
    }
}
