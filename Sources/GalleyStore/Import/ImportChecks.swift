import GalleyCore
import GalleyKit

/// Findings of `galley import` beyond validate's (whose checks it runs first).
package enum ImportChecks {
    package static let checks: [Check] = [.importOlder, .importSameVersionChanged]
}

extension Check {
    package static let importOlder = Check(
        "import.older", .import, .error, "The store has a newer version of the issue than the zip.",
        explanation: "Versions are ordered by the issue's last_updated: an older zip would roll the issue back, so it is refused (exit 1). `--force` replaces the stored issue anyway.",
        triggering: [.importInOrder("zips/example-valid.zip", "versions/example-valid.zip")],
        clean: [.importInOrder("versions/example-valid.zip", "zips/example-valid.zip")])
    package static let importSameVersionChanged = Check(
        "import.same-version-changed", .import, .error, "The store has the issue with the same last_updated but other content.",
        explanation: "Apps fetch an issue again only when its version (last_updated) changes: an edited issue with the old date would reach no reader, and replacing it silently would make the store disagree with what apps hold. Import compares the zips' contents (names, CRC-32s and sizes of every file) and refuses the change (exit 1); bump last_updated (`galley pack --bump`) or pass `--force`.",
        triggering: [.importInOrder("zips/example-valid.zip", "versions/edited/example-valid.zip")],
        clean: [.importInOrder("zips/example-valid.zip", "zips/example-valid.zip")])
}

extension CheckCatalog {
    /// Every check Galley has: validate's, pack's and render's catalogue, then the store's.
    /// `--list-checks` and docs/checks.md show this list.
    public static let complete: [Check] = all + ImportChecks.checks
}
