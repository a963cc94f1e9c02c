import GalleyCore

/// Findings of `galley render`.
enum RenderChecks {
    package static let checks: [Check] = [.renderAssetMissing, .renderRemovedElement, .renderRemovedAttribute, .renderRemovedURL]
}

extension Check {
    static let renderAssetMissing = Check(
        "render.asset-missing", .render, .warning, "A placeholder names no asset of its article.",
        explanation: "The placeholder is removed (or kept, or an error, with `--on-missing`) and the page lacks the asset. `galley validate` reports the broken reference as ref.placeholder-unknown.",
        triggering: [.render("<p>Intro.</p>\n<!-- [ASSET: nothing] -->\n")],
        clean: [.render("<p>Intro.</p>\n<!-- [ASSET: photo-1] -->\n")])
    static let renderRemovedElement = Check(
        "render.removed-element", .render, .warning, "Render removed an element a preview page may not run or embed.",
        explanation: "Bodies pass an allow-list (text, tables, figures, media): scripts, styles, frames, plugins, forms, inline SVG and MathML are dropped with their content; unknown wrappers (font, center) are dropped and their text kept. `--trust-bodies` keeps bodies as they are.",
        triggering: [.render("<p>Intro.</p>\n<script>alert(1)</script>\n<!-- [ASSET: photo-1] -->\n")],
        clean: [.render("<p>Intro.</p>\n<!-- [ASSET: photo-1] -->\n")])
    static let renderRemovedAttribute = Check(
        "render.removed-attribute", .render, .warning, "Render removed an attribute outside the allow-list (event handlers above all).",
        explanation: "`onerror`, `onload` and every other `on…` attribute run script; attributes no article element uses are dropped too.",
        triggering: [.render("<p onclick=\"steal()\">Intro.</p>\n<!-- [ASSET: photo-1] -->\n")],
        clean: [.render("<p class=\"lead\">Intro.</p>\n<!-- [ASSET: photo-1] -->\n")])
    static let renderRemovedURL = Check(
        "render.removed-url", .render, .warning, "Render removed a URL whose scheme an article may not use.",
        explanation: "Links and media may use relative URLs, http(s), mailto and tel (and data:image in images); `javascript:`, `data:text/html` and the like are removed with their attribute.",
        triggering: [.render("<p><a href=\"javascript:alert(1)\">Tap</a></p>\n<!-- [ASSET: photo-1] -->\n")],
        clean: [.render("<p><a href=\"https://example.com/\">Tap</a></p>\n<!-- [ASSET: photo-1] -->\n")])
}
