internal import CCmark
import GalleyCore

/// Markdown to HTML with cmark-gfm (the only file that touches CCmark).
///
/// Raw HTML is kept (`CMARK_OPT_UNSAFE`): asset placeholders are HTML comments, and a
/// CommonMark engine left in its safe mode replaces them with `<!-- raw HTML omitted -->`.
/// Markdown as editors write it on GitHub: footnotes (`[^1]`), and the table, strikethrough,
/// autolink and task-list extensions, each switched on here deliberately (a missing one is a
/// failure, not a silent fallback). GitHub's tag filter is not on, so Markdown and HTML bodies
/// pass the same raw HTML (`galley validate` reports scripts; render sanitises).
public struct CommonMark: Sendable {
    public init() {}

    /// The GitHub extensions every body is read with.
    static let extensions = ["table", "strikethrough", "autolink", "tasklist"]

    /// cmark-gfm's extension registry is process-wide and its registration is not thread-safe:
    /// a Swift static is initialised exactly once, whichever thread comes first.
    private static let registered: Void = { cmark_gfm_core_extensions_ensure_registered() }()

    public func html(fromMarkdown markdown: String) -> String {
        _ = Self.registered
        let options = CMARK_OPT_UNSAFE | CMARK_OPT_FOOTNOTES
        guard let parser = cmark_parser_new(options) else { return "" }
        defer { cmark_parser_free(parser) }
        for name in Self.extensions {
            // Registered by cmark_gfm_core_extensions_ensure_registered: present in every build.
            guard let extensionPointer = cmark_find_syntax_extension(name) else {
                preconditionFailure("cmark-gfm lacks its `\(name)` extension")
            }
            cmark_parser_attach_syntax_extension(parser, extensionPointer)
        }
        var text = markdown
        text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                if let base = chars.baseAddress { cmark_parser_feed(parser, base, chars.count) }
            }
        }
        guard let document = cmark_parser_finish(parser) else { return "" }
        defer { cmark_node_free(document) }
        guard let rendered = cmark_render_html(document, options, cmark_parser_get_syntax_extensions(parser)) else {
            return ""
        }
        defer { free(rendered) }
        return String(cString: rendered)
    }
}
