import ArgumentParser
import Foundation
import GalleyKit
import GalleyCore
import GalleyFormats
import GalleyStore

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Turn asset placeholders into HTML: one article, a page, or a whole issue as a preview site.",
        discussion: """
            INPUT is an issue zip, an issue source folder or a latest.json; nothing needs importing. \
            Placeholders (`<!-- [ASSET: id] -->`) become markup in the chosen style: `semantic` \
            (figure, img with alt and size, audio and video with controls, figcaption; all text \
            escaped) or `dumpling` (the markup Dumpling's replacePatternsWithAssets made; see \
            docs/render.md for where it differs).

            Modes:
              galley render ISSUE --output DIR            a preview site: index.html, articles/, assets/
              galley render ISSUE --article ID [--page]   one article (body, or a full page) to stdout or --output FILE
              galley render ISSUE --stdin [--article ID]  a raw body from standard input, with ISSUE's assets
              galley render --from-store --article ID     an imported article, from the issue store

            Bodies are made safe by default: an allow-list keeps text, tables, figures and \
            media and removes scripts, event handlers, frames, plugins and javascript: URLs \
            (each removal is a warning: render.removed-element, render.removed-attribute, \
            render.removed-url), and every page carries a Content-Security-Policy that forbids \
            script. --trust-bodies keeps bodies as they are, without the policy.

            URLs are relative to the output by default (the site's assets/ folder; for a source \
            folder, the source files; for a zip, the file names beside the output); --asset-base \
            points them at a CDN or a file:// folder instead.

            Examples:
              galley render Examples/winter-2026 --output build/preview
              galley render dist/issue.zip --article 5f827f80262d6fe87d41ca17 --page --output a.html
              galley render dist/issue.zip --stdin --style dumpling --asset-base file:///var/issue/ < body.html

            With --json, standard output is one document: a site's summary (path, articles, \
            assets, warnings), or for one article {"html", "path", "warnings"} (html null when \
            written to --output); docs/json/render.schema.json.
            """)

    @Argument(help: "An issue zip, source folder or latest.json (not with --from-store).", completion: .file())
    var input: String?

    @Flag(help: "Render --article from the issue store (see --store) instead of INPUT.")
    var fromStore = false

    @OptionGroup(title: "With --from-store") var store: StoreOptions

    @Option(help: ArgumentHelp("With --from-store: the issue, when several have an article with this id.", valueName: "id"))
    var issue: String?

    @Option(help: "The article to render (global id; for a source folder also its slug).")
    var article: String?

    @Option(name: [.customShort("o"), .customLong("output")], help: "The site's folder, or the file for one article (default: standard output).")
    var outputPath: String?

    @Flag(help: "Replace an existing output.")
    var force = false

    @Flag(help: "Read a body from standard input and render it with INPUT's assets.")
    var stdin = false

    @Option(help: "The markup for assets.")
    var style: RenderStyle = .semantic

    @Option(help: ArgumentHelp("A regular expression whose named group `id` captures the asset id.", valueName: "regex"))
    var pattern: String?

    @Option(help: "What to do with a placeholder that names no asset: remove (with a warning), keep or error.")
    var onMissing: MissingAssetPolicy = .remove

    @Option(help: ArgumentHelp("Prefix for asset URLs (https://cdn.example.com/issue/ or file:///...).", valueName: "url"))
    var assetBase: String?

    @Option(help: ArgumentHelp("A Mustache template for every asset (docs/render.md lists its values).", valueName: "file"))
    var template: String?

    @Option(help: ArgumentHelp("A Mustache template for whole article pages.", valueName: "file"))
    var pageTemplate: String?

    @Flag(help: "Wrap a single article in a complete HTML5 page.")
    var page = false

    @Option(help: ArgumentHelp("The pages' language (default: the issue's metadata.language, else en).", valueName: "code"))
    var lang: String?

    @OptionGroup var output: OutputOptions

    @Flag(help: "Keep bodies as they are, scripts included, and leave out the pages' Content-Security-Policy (for publishers whose own pages need their scripts).")
    var trustBodies = false

    func validate() throws {
        if fromStore == (input != nil) {
            throw ValidationError("give INPUT, or --from-store with --article (not both)")
        }
        if fromStore && article == nil {
            throw ValidationError("--from-store renders one article: give --article ID")
        }
        if !fromStore && !stdin && article == nil && outputPath == nil {
            throw ValidationError("give --output DIR for a preview site, or --article ID for one article")
        }
    }

    /// `--json` for one article.
    struct ArticleDocument: Encodable {
        @JSONNullable var html: String?
        @JSONNullable var path: String?
        var warnings: [Diagnostic]
    }

    func run() throws {
        let console = output.console
        var options = RenderOptions(style: style, pattern: pattern, missing: onMissing, assetBase: assetBase, page: page, language: lang)
        options.trustBodies = trustBodies
        let inputURL = URL(fileURLWithPath: input ?? ".")
        // Relative asset URLs start from the folder the HTML lands in.
        let outputFolder = outputPath.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
            ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        try console.run {
            options.assetTemplate = try template.map(RenderOptions.template(at:))
            options.pageTemplate = try pageTemplate.map(RenderOptions.template(at:))
            let renderer = Renderer(options: options)
            if fromStore, let article {
                let (html, warnings) = try renderer.renderArticle(
                    fromStore: try store.open(.read), id: article, issue: issue,
                    outputDirectory: outputFolder)
                try deliver(html, warnings, console)
            } else if stdin {
                let data = FileHandle.standardInput.readDataToEndOfFile()
                guard let body = String(data: data, encoding: .utf8) else {
                    throw GalleyError("standard input is not UTF-8 text", id: .inputUnreadable, hint: "Convert the body to UTF-8.")
                }
                let (html, warnings) = try renderer.renderBody(body, manifest: inputURL, articleID: article)
                try deliver(html, warnings, console)
            } else if let article {
                let (html, warnings) = try console.timed("rendered") {
                    try renderer.renderArticle(from: inputURL, id: article, outputDirectory: outputFolder)
                }
                try deliver(html, warnings, console)
            } else if let outputPath {
                // A source folder's site gets thumbnails: libvips's buffers, taken and freed on
                // many threads, share one heap (a zip's site makes none, and keeps glibc's rule).
                if case .source = try? IssueInput.detect(inputURL.path) { FreedMemory.oneHeap() }
                let summary = try console.timed("rendered the site") {
                    try renderer.renderSite(from: inputURL, to: URL(fileURLWithPath: outputPath), force: force)
                }
                console.findings(summary.warnings)
                if output.json { return console.emit(summary) }
                console.status(
                    "rendered \(summary.articles) \(summary.articles == 1 ? "article" : "articles") and \(summary.assets) "
                        + "\(summary.assets == 1 ? "asset" : "assets") (\(summary.files) \(summary.files == 1 ? "file" : "files")) "
                        + "into \(summary.path); open \(summary.path)/index.html")
            }
        }
    }

    /// One article's HTML: to --output (atomically; an existing file only with --force), else
    /// standard output; under --json, inside the document.
    private func deliver(_ html: String, _ warnings: [Diagnostic], _ console: Console) throws {
        if let outputPath { try Renderer.write(html: html, to: URL(fileURLWithPath: outputPath), force: force) }
        console.findings(warnings)
        if output.json {
            return console.emit(ArticleDocument(html: outputPath == nil ? html : nil, path: outputPath, warnings: warnings))
        }
        if let outputPath {
            // Written to a file: say what went where, as a site's render does.
            let what = article.map { "article \($0)" } ?? "the body"
            console.status("rendered \(what)\(page ? " as a page" : "") into \(outputPath)")
        } else {
            console.data(html)
        }
    }
}
