import GalleyCore
import GalleyKit

/// Findings of `galley import` beyond validate's (whose checks it runs first).
enum ImportChecks {
    package static let checks: [Check] = [.importOlder]
}

extension Check {
    static let importOlder = Check(
        "import.older", .import, .error, "The store has a newer version of the issue than the zip.",
        explanation: "Versions are ordered by the issue's last_updated: an older zip would roll the issue back, so it is refused (exit 1). `--force` replaces the stored issue anyway.",
        triggering: [.importInOrder("zips/example-valid.zip", "versions/example-valid.zip")],
        clean: [.importInOrder("versions/example-valid.zip", "zips/example-valid.zip")])
}

extension CheckCatalog {
    /// Every check Galley has: validate's, pack's and render's catalogue, then the store's.
    /// `--list-checks` and docs/checks.md show this list.
    public static let complete: [Check] = all + ImportChecks.checks
}
