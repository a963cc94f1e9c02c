import GalleyCore

/// Findings of `galley render`.
enum RenderChecks {
    package static let checks: [Check] = [.renderAssetMissing]
}

extension Check {
    static let renderAssetMissing = Check(
        "render.asset-missing", .render, .warning, "A placeholder names no asset of its article.",
        explanation: "The placeholder is removed (or kept, or an error, with `--on-missing`) and the page lacks the asset. `galley validate` reports the broken reference as ref.placeholder-unknown.",
        triggering: [.render("<p>Intro.</p>\n<!-- [ASSET: nothing] -->\n")],
        clean: [.render("<p>Intro.</p>\n<!-- [ASSET: photo-1] -->\n")])
}
