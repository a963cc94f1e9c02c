import GalleyCore
import GalleyFormats

/// Every check of `galley validate`, `pack` and `render`, in the order `--list-checks` and
/// docs/checks.md show them. Each checker declares its own checks beside the code that emits
/// them (`ContainerChecks.checks`, `SourceChecks.checks`, ...); this is their concatenation.
/// The store's checks (`import.*`) sit one target up and join in `CheckCatalog.complete`.
public enum CheckCatalog {
    public static let all: [Check] = ContainerChecks.checks + ManifestChecks.checks + ReferenceChecks.checks
        + BodyChecks.checks + MediaChecks.checks + SourceChecks.checks + PackChecks.checks + RenderChecks.checks

    public static func check(_ id: CheckID) -> Check? { byID[id] }

    private static let byID: [CheckID: Check] = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })
}
