import Foundation
import Mustache
import GalleyCore
import GalleyFormats

public struct RenderOptions: Sendable {
    public var style: RenderStyle = .semantic
    /// A custom placeholder pattern with a named group `id`; `nil` for Dumpling's.
    public var pattern: String?
    public var missing: MissingAssetPolicy = .remove
    /// Prefix for asset URLs instead of paths relative to the output.
    public var assetBase: String?
    /// Wrap single articles in a complete HTML5 document.
    public var page = false
    /// The pages' language; default: the issue's `metadata.language`, else `en`.
    public var language: String?
    /// A publisher's Mustache template for every asset (see `AssetMarkup.context(for:)`).
    public var assetTemplate: MustacheTemplate?
    /// A publisher's Mustache template for whole pages (see `PageRenderer.context`).
    public var pageTemplate: MustacheTemplate?
    /// Keep bodies as they are (scripts included) and send pages without a
    /// Content-Security-Policy: for publishers whose own pages need their scripts.
    public var trustBodies = false

    public init(
        style: RenderStyle = .semantic, pattern: String? = nil, missing: MissingAssetPolicy = .remove,
        assetBase: String? = nil, page: Bool = false, language: String? = nil
    ) {
        (self.style, self.pattern, self.missing) = (style, pattern, missing)
        (self.assetBase, self.page, self.language) = (assetBase, page, language)
    }

    /// Parses a Mustache template file, or fails with where it went wrong.
    public static func template(at path: String) throws -> MustacheTemplate {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw GalleyError("cannot read the template", id: .configuration, path: path)
        }
        do {
            return try MustacheTemplate(string: text)
        } catch {
            throw GalleyError("the template does not parse: \(error)", id: .configuration, path: path,
                              hint: "Check that every {{#section}} is closed by {{/section}}.")
        }
    }
}

/// `galley render`: placeholders to HTML, articles to pages, issues to a preview site, from an
/// issue zip or a source folder (no import needed).
public struct Renderer: Sendable {
    public var options: RenderOptions

    public init(options: RenderOptions = RenderOptions()) { self.options = options }

    /// One article, found by global id (or, in a source folder, by slug or folder name).
    /// URLs are relative to `outputDirectory` unless `assetBase` is set.
    public func renderArticle(from input: URL, id: String, outputDirectory: URL) throws -> (html: String, warnings: [Diagnostic]) {
        var result: (String, [Diagnostic])?
        var warnings: [Diagnostic] = []
        let issue = try read(input, extractTo: nil, wanted: id) { article, names, locator in
            guard Self.isNamed(article.record, id, names: names) else { return true }
            let markup = markupFor(input: input, outputDirectory: outputDirectory, locator: locator)
            let (body, found) = try expand(article.record, lookup: article.lookup, markup: markup)
            warnings += found
            result = (body, [])
            if options.page {
                result?.0 = pageRenderer(language: options.language ?? "en")
                    .article(article.record, body: body, issueTitle: nil, indexLink: nil)
            }
            return false
        }
        guard var (html, _) = result else {
            throw GalleyError("no article `\(id)` in the issue", id: .notFound, path: input.path,
                              hint: "Give an article's global_id (or, for a source folder, its slug); `galley render \(input.lastPathComponent) --output DIR` renders them all.")
        }
        if options.page, options.language == nil, let language = issue.language {
            html = html.replacingOccurrences(of: "<html lang=\"en\">", with: "<html lang=\"\(HTMLText.attribute(language))\">")
        }
        return (html, warnings)
    }

    public struct SiteSummary: Sendable, Codable {
        public var path: String
        public var articles: Int
        /// The issue's assets (latest.json's records, as pack counts them).
        public var assets: Int
        /// The files written under assets/: the assets' own, their thumbnails and posters.
        public var files: Int
        public var warnings: [Diagnostic]
    }

    /// The whole issue as a preview site in `directory`: index.html, articles/, assets/. Built
    /// beside it and moved into place when complete; an existing folder is replaced only with `force`.
    public func renderSite(from input: URL, to directory: URL, force: Bool) throws -> SiteSummary {
        if FileManager.default.fileExists(atPath: directory.path) && !force {
            throw GalleyError("the output folder already exists", id: .outputExists, path: directory.path, hint: "Pass --force to replace it.")
        }
        // The site's parent folders are made as needed, and removed again if the render fails.
        let created = try FolderMaker.make(directory.deletingLastPathComponent())
        var succeeded = false
        let staging = AtomicFile.temporaryName(for: directory)
        defer {
            try? FileManager.default.removeItem(at: staging)
            if !succeeded { FolderMaker.removeEmpty(created) }
        }
        try FileManager.default.createDirectory(at: staging.appending(path: "articles"), withIntermediateDirectories: true)
        let assets = staging.appending(path: "assets")
        try FileManager.default.createDirectory(at: assets, withIntermediateDirectories: true)

        var entries: [PageRenderer.Entry] = []
        var warnings: [Diagnostic] = []
        var language = options.language
        let markup = withTemplate(AssetMarkup(style: options.style, assetBase: options.assetBase ?? "../assets/"))
        let thumbBase = options.assetBase ?? "assets/"
        var pages: [PendingPage] = []
        var issueTitle: String?
        var assetIDs = Set<String>()
        var issue = try read(input, extractTo: assets) { article, _, _ in
            issueTitle = issueTitle ?? article.issueTitle
            for asset in article.record.images + article.record.sounds + article.record.videos { assetIDs.insert(asset.id) }
            let (body, found) = try expand(article.record, lookup: article.lookup, markup: markup)
            warnings += found
            // The id cut to 100 bytes: a manifest's id may be longer than a file name can be;
            // the number keeps pages apart.
            let file = "articles/\(pad(entries.count + 1, 3))-\(SourceTree.zipSafeName(article.record.globalID, maxBytes: 100)).html"
            // The article's picture: its first image's thumbnail, else a sound's or video's own
            // thumbnail (an audio article's cover), never the media file itself.
            let thumb = article.record.images.first
                ?? (article.record.sounds + article.record.videos).first { !$0.crop350.isEmpty && $0.crop350 != $0.fileName }
            entries.append(PageRenderer.Entry(
                title: article.record.title, dek: article.record.dek, href: file,
                thumbnail: thumb.map { thumbBase + HTMLText.urlPath($0.crop350) },
                thumbnailAlt: thumb.map { $0.metadata?["alt"]?.stringValue ?? $0.caption } ?? ""))
            // Each page links its neighbours in issue order; the last page waits for its next.
            var page = PendingPage(record: article.record, body: body, file: file)
            if let previous = entries.dropLast().last {
                page.previous = PageRenderer.Link(href: (previous.href as NSString).lastPathComponent, title: previous.title)
            }
            if !pages.isEmpty {
                pages[pages.count - 1].next = PageRenderer.Link(href: (file as NSString).lastPathComponent, title: article.record.title)
            }
            pages.append(page)
            if pages.count > 64 {
                let last = pages.removeLast()
                try flush(&pages, staging, language ?? "en", issueTitle: issueTitle)
                pages = [last]
            }
            return true
        }
        if language == nil { language = issue.language }
        // The source's warnings (maybe thousands) go first, extended in place rather than copied.
        var all = issue.warnings
        issue.warnings = []
        all.append(contentsOf: warnings)
        warnings = all
        try flush(&pages, staging, language ?? "en", issueTitle: issue.record.title)
        let cover = issue.record.images.first
        try writeFile(staging.appending(path: "style.css").path, PageRenderer.stylesheet + "\n")
        var indexRenderer = pageRenderer(language: language ?? "en")
        indexRenderer.template = nil
        indexRenderer.stylesheetLink = "style.css"
        let index = indexRenderer.index(
            issue.record, cover: cover.map { thumbBase + HTMLText.urlPath($0.fileName) },
            coverAlt: cover.map { $0.metadata?["alt"]?.stringValue ?? $0.caption } ?? "", entries: entries)
        try writeFile(staging.appending(path: "index.html").path, index)
        let fileCount = (try? FileManager.default.subpathsOfDirectory(atPath: assets.path).count) ?? 0
        for image in issue.record.images { assetIDs.insert(image.id) }
        if FileManager.default.fileExists(atPath: directory.path) { try FileManager.default.removeItem(at: directory) }
        try FileManager.default.moveItem(at: staging, to: directory)
        succeeded = true
        return SiteSummary(path: directory.path, articles: entries.count, assets: assetIDs.count, files: fileCount, warnings: warnings)
    }

    /// Writes the pages rendered so far (a few at a time, so memory does not grow with the issue).
    private func flush(_ pages: inout [PendingPage], _ staging: URL, _ language: String,
                       issueTitle: String? = nil) throws {
        var site = pageRenderer(language: language)
        site.stylesheetLink = "../style.css"
        let renderer = site
        let failures = parallelMap(pages) { page -> GalleyError? in
            let html = renderer.article(page.record, body: page.body, issueTitle: issueTitle, indexLink: "../index.html",
                                        previous: page.previous, next: page.next)
            do {
                try writeFile(staging.appending(path: page.file).path, html)
                return nil
            } catch {
                return error as? GalleyError ?? GalleyError("\(error)")
            }
        }
        if let failure = failures.compactMap({ $0 }).first { throw failure }
        pages.removeAll()
    }

    struct PendingPage: Sendable {
        package var record: ArticleRecord
        package var body: String
        package var file: String
        package var previous: PageRenderer.Link?
        package var next: PageRenderer.Link?
    }

    /// A raw body with the manifest it belongs to: for scripts.
    public func renderBody(_ body: String, manifest: URL, articleID: String?) throws -> (html: String, warnings: [Diagnostic]) {
        var assets: [String: AssetRecord] = [:]
        _ = try read(manifest, extractTo: nil, wanted: articleID) { article, _, _ in
            if articleID == nil || article.record.globalID == articleID {
                for asset in article.record.assets { assets[asset.id] = assets[asset.id] ?? asset }
            }
            return true
        }
        var record = ArticleRecord(globalID: articleID ?? "stdin", title: "", body: body, dateLastUpdated: "")
        record.body = body
        let markup = withTemplate(AssetMarkup(style: options.style, assetBase: options.assetBase ?? ""))
        return try expand(record, lookup: { assets[$0] }, markup: markup)
    }

    /// Pages in the run's language, template and policy.
    public func pageRenderer(language: String) -> PageRenderer {
        var page = PageRenderer(language: language)
        page.template = options.pageTemplate
        page.contentSecurityPolicy = options.trustBodies ? nil : PageRenderer.policy(assetBase: options.assetBase)
        return page
    }

    // MARK: Expansion

    /// Sanitises the body (unless `trustBodies`), then replaces its placeholders; the findings
    /// are what was removed and the placeholders that named nothing.
    package func expand(_ record: ArticleRecord, lookup: (String) -> AssetRecord?, markup: AssetMarkup) throws -> (String, [Diagnostic]) {
        let expander = try PlaceholderExpander(pattern: options.pattern, markup: markup, missing: options.missing)
        var body = record.body
        var removals: [Diagnostic] = []
        if !options.trustBodies {
            let sanitized = HTMLSanitizer(keepComment: { expander.isPlaceholder($0) }).sanitize(body)
            body = sanitized.html
            removals = Self.report(sanitized.removed, article: record.globalID)
        }
        // A body's own references to files of the issue (`<a href="report.pdf">`, a
        // `<video poster>`) point where the render puts those files, as asset URLs do.
        body = LocalReferences.relocating(body) { markup.url($0.path) }
        var result = expander.expand(body, lookup: lookup)
        // A figure is a block: one expanded inside a paragraph (an asset placed mid-text, a
        // Markdown image) would make the page invalid HTML5, so the paragraph is closed before
        // it and opened again after. The sanitized body is well-formed, which the scan needs.
        if options.style == .semantic, !options.trustBodies { result.html = Self.liftingFigures(result.html) }
        let findings = removals + result.missingIDs.map { id in
            Diagnostic(
                .renderAssetMissing, "the placeholder names `\(id)`, which no asset of article `\(record.globalID)` has; it was \(options.missing == .keep ? "kept" : "removed")",
                at: SourceLocation(path: record.globalID), hint: "Run `galley validate` on the issue to see every broken reference.")
        }
        if options.missing == .error, !result.missingIDs.isEmpty {
            throw DiagnosticsError(findings.filter { $0.id == Check.renderAssetMissing.id }.map { var d = $0; d.severity = .error; return d })
        }
        return (result.html, findings)
    }

    /// `html` with every `<figure>` moved out of the paragraph around it: the paragraph ends
    /// before the figure (or is dropped when it held nothing else) and starts again, with its
    /// attributes, after it (or not at all when only its end was left). For well-formed HTML,
    /// as the sanitizer writes it: paragraphs do not nest and figures do not nest.
    static func liftingFigures(_ html: String) -> String {
        guard html.contains("<figure") else { return html }
        let bytes = Array(html.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 64)
        // The open paragraph: its start tag and where in `out` the tag and its content begin.
        var paragraph: (tag: ArraySlice<UInt8>, tagAt: Int, contentAt: Int)?
        // A paragraph a figure interrupted, to reopen before its next content.
        var interrupted: ArraySlice<UInt8>?
        func starts(_ needle: [UInt8], at index: Int) -> Bool {
            index + needle.count <= bytes.count && bytes[index..<(index + needle.count)].elementsEqual(needle)
        }
        // The tags the scan looks for, made once: it asks at every byte.
        let (pOpen, pWithAttributes, pClose) = (Array("<p>".utf8), Array("<p ".utf8), Array("</p>".utf8))
        let (figureOpen, figureClose) = (Array("<figure".utf8), Array("</figure>".utf8))
        func tagEnd(from index: Int) -> Int {
            var end = index
            while end < bytes.count, bytes[end] != UInt8(ascii: ">") { end += 1 }
            return min(end + 1, bytes.count)
        }
        var i = 0
        while i < bytes.count {
            let isSpace = bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x09 || bytes[i] == 0x0D
            if let tag = interrupted, !isSpace {
                interrupted = nil
                if starts(pClose, at: i) {
                    i += 4
                    continue
                }
                paragraph = (tag, out.count, out.count + tag.count)
                out.append(contentsOf: tag)
            }
            if starts(pOpen, at: i) || starts(pWithAttributes, at: i) {
                let end = tagEnd(from: i)
                paragraph = (bytes[i..<end], out.count, out.count + (end - i))
                out.append(contentsOf: bytes[i..<end])
                i = end
            } else if starts(pClose, at: i) {
                paragraph = nil
                out.append(contentsOf: bytes[i..<(i + 4)])
                i += 4
            } else if starts(figureOpen, at: i), let open = paragraph {
                let before = out[open.contentAt...]
                if before.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x09 || $0 == 0x0D }) {
                    out.removeSubrange(open.tagAt...)
                } else {
                    while let last = out.last, last == 0x20 || last == 0x0A || last == 0x09 { out.removeLast() }
                    out.append(contentsOf: Array("</p>\n".utf8))
                }
                var end = i
                while end < bytes.count, !starts(figureClose, at: end) { end += 1 }
                end = min(end + figureClose.count, bytes.count)
                out.append(contentsOf: bytes[i..<end])
                paragraph = nil
                interrupted = open.tag
                i = end
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// One warning per kind of removal and article, naming the first few with their body lines.
    static func report(_ removed: [Removal], article: String) -> [Diagnostic] {
        Removal.Kind.allCases.compactMap { kind in
            let items = removed.filter { $0.kind == kind }
            guard let first = items.first else { return nil }
            var list = items.prefix(4).map { "\($0.what) (body line \($0.line))" }.joined(separator: ", ")
            if items.count > 4 { list += " and \(items.count - 4) more" }
            let (check, noun): (Check, String) = switch kind {
            case .element: (.renderRemovedElement, items.count == 1 ? "element" : "elements")
            case .attribute: (.renderRemovedAttribute, items.count == 1 ? "attribute" : "attributes")
            case .url: (.renderRemovedURL, items.count == 1 ? "URL" : "URLs")
            }
            return Diagnostic(check, "removed \(items.count) \(noun) from article `\(article)`: \(list)",
                              at: SourceLocation(path: article, line: first.line),
                              hint: "A preview page runs nothing from a body; `galley validate` says what to fix in it, and --trust-bodies keeps bodies as they are.")
        }
    }

    private func markupFor(input: URL, outputDirectory: URL, locator: (@Sendable (String) -> String?)?) -> AssetMarkup {
        if let base = options.assetBase { return withTemplate(AssetMarkup(style: options.style, assetBase: base)) }
        guard let locator else { return withTemplate(AssetMarkup(style: options.style, assetBase: "")) }
        let from = outputDirectory.standardizedFileURL.path
        return withTemplate(AssetMarkup(style: options.style) { name in
            guard let path = locator(name) else { return HTMLText.urlPath(name) }
            return HTMLText.urlPath(relativePath(from: from, to: path))
        })
    }

    private func withTemplate(_ markup: AssetMarkup) -> AssetMarkup {
        var copy = markup
        copy.template = options.assetTemplate
        return copy
    }

    // MARK: Reading an issue

    struct ReadArticle {
        package var record: ArticleRecord
        package var lookup: (String) -> AssetRecord?
        /// The issue's title, when it is known by the time this article is read.
        package var issueTitle: String?
    }

    struct ReadIssue {
        package var record: IssueRecord
        /// What reading a source folder warned about (pack's findings: a picture libvips cannot
        /// read, dates out of order...); nothing for a zip or latest.json, whose findings are
        /// `galley validate`'s.
        package var warnings: [Diagnostic] = []
        package var language: String? {
            if case .string(let value)? = record.metadata["language"] ?? record.metadata["lang"] { return value }
            return nil
        }
    }

    /// Reads an issue zip (after refusing a hostile container) or source folder, handing each
    /// article to `sink` (which returns false to stop) and, with `extractTo`, writing its media
    /// files there under their names in the zip. `wanted` (a global id, or a source folder's
    /// slug or folder name) is the one article the sink is after: a source folder keeps only
    /// it until the whole issue is planned. The sink still decides.
    func read(
        _ input: URL, extractTo: URL?, wanted: String? = nil,
        sink: (ReadArticle, _ names: [String], _ locator: (@Sendable (String) -> String?)?) throws -> Bool
    ) throws -> ReadIssue {
        switch try IssueInput.detect(input.path) {
        case .source: return try readSource(input, extractTo: extractTo, wanted: wanted, sink: sink)
        case .manifest: return try readManifestFile(input, sink: sink)
        case .zip: return try readZip(input, extractTo: extractTo, sink: sink)
        case .zipFolder:
            throw GalleyError("the folder holds issue zips, not an issue source", id: .inputKind, path: input.path,
                              hint: "Render one zip at a time: `galley render FOLDER/ISSUE.zip --output DIR`.")
        }
    }

    /// The names a source folder's article also goes by, besides its global id: its slug and
    /// its folder's name (what the sink is handed as `names`).
    static func names(of article: ArticleSource) -> [String] { [article.slug, article.folder] }

    /// Whether `id` names the article: its global id, or one of its other `names`.
    static func isNamed(_ record: ArticleRecord, _ id: String, names: [String]) -> Bool {
        record.globalID == id || names.contains(id)
    }

    private func readSource(
        _ root: URL, extractTo: URL?, wanted: String?,
        sink: (ReadArticle, [String], (@Sendable (String) -> String?)?) throws -> Bool
    ) throws -> ReadIssue {
        let loaded = try IssueSourceLoader().load(root)
        guard let source = loaded.source else { throw DiagnosticsError(loaded.diagnostics) }
        // A site gets the thumbnails pack would make (its index shows them), made beside the
        // assets folder and removed once copied.
        var maker: ThumbnailMaker?
        if let extractTo {
            let scratch = extractTo.deletingLastPathComponent().appending(path: ".thumbnails")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            maker = ThumbnailMaker(folder: scratch)
        }
        defer { if let maker { AtomicFile.removeFolderOrFile(maker.folder) } }
        var stop = false
        // A site is rendered as the articles are built: its pages name their pictures by the
        // site's own assets folder, and a finding that refuses the issue throws below, before
        // the site (built in its staging folder) is put in place. Anything else needs the
        // source files' paths (`locator`), known once the whole issue is planned, and keeps
        // only the article asked for (`wanted`; all of them without one). At 30,000 articles
        // every article kept for after took a site's render to 288 MB.
        var pending: [(ArticleSource, ArticleRecord)] = []
        // The planner (its id tables: 6 MB at 30,000 articles) lives only as long as the
        // planning; what comes after needs the issue, the files, the findings and `reading`.
        let (diagnostics, entries, issue, reading) = try {
            () throws -> ([Diagnostic], [ZipEntryPlan], IssueRecord, (ArticleRecord) -> ReadArticle) in
            var planner = Packer.issuePlanner(source, sourceDateEpoch: nil, thumbnails: maker)
            let shared = Dictionary(planner.issue.images.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            let issueTitle = planner.issue.title
            let reading = { (record: ArticleRecord) -> ReadArticle in
                let own = Dictionary(record.assets.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
                return ReadArticle(record: record, lookup: { own[$0] ?? shared[$0] }, issueTitle: issueTitle)
            }
            let diagnostics = try Packer().buildArticles(source, &planner, thumbnails: maker) { article, record, _ in
                if extractTo != nil {
                    if !stop { stop = try !sink(reading(record), Self.names(of: article), nil) }
                } else if wanted.map({ Self.isNamed(record, $0, names: Self.names(of: article)) }) ?? true {
                    pending.append((article, record))
                }
            }
            return (diagnostics, planner.takeEntries(), planner.issue, reading)
        }()
        if diagnostics.contains(where: { $0.severity == .error }) { throw DiagnosticsError(diagnostics) }
        if let extractTo {
            // Copies on every core: thousands of small files are mostly system-call latency.
            let failure = parallelFirstFailure(entries) { entry -> GalleyError? in
                do {
                    try FileManager.default.copyItem(atPath: entry.path, toPath: extractTo.appending(path: entry.name).path)
                    return nil
                } catch {
                    let (reason, hint) = FileSystemError.describe(error)
                    return GalleyError("cannot copy: \(reason)", id: .outputUnwritable, path: entry.path, hint: hint)
                }
            }
            if let failure { throw failure }
        }
        // Each media file's path by its name in the zip, for the articles kept (a site keeps none).
        let paths = pending.isEmpty ? [:] : Dictionary(uniqueKeysWithValues: entries.map { ($0.name, $0.path) })
        let locator: @Sendable (String) -> String? = { paths[$0] }
        for (article, record) in pending where !stop {
            stop = try !sink(reading(record), Self.names(of: article), locator)
        }
        // No errors are left here; the warnings are handed on as they are unless info findings are among them.
        let warnings = diagnostics.allSatisfy { $0.severity == .warning } ? diagnostics : diagnostics.filter { $0.severity == .warning }
        return ReadIssue(record: issue, warnings: warnings)
    }

    private func readManifestFile(
        _ url: URL, sink: (ReadArticle, [String], (@Sendable (String) -> String?)?) throws -> Bool
    ) throws -> ReadIssue {
        var reader = try ManifestStream(file: url)
        return try streamManifest(&reader, display: url.path, sink: sink)
    }

    private func readZip(
        _ url: URL, extractTo: URL?, sink: (ReadArticle, [String], (@Sendable (String) -> String?)?) throws -> Bool
    ) throws -> ReadIssue {
        // The container is checked before anything is read or written: no bomb, slip or link.
        var findings = Findings()
        let directory = ContainerChecks(path: url.path, limits: ContainerLimits()).open(into: &findings)
        let errors = findings.items.filter { $0.severity == .error }
        guard let directory, errors.isEmpty else { throw DiagnosticsError(errors) }
        // What only reading finds (a CRC, inflate data, a size) is refused as validate refuses
        // it: a finding, exit 1, located at the entry.
        func refused(_ check: Check, _ message: String, entry: String?, hint: String) -> DiagnosticsError {
            DiagnosticsError([Diagnostic(check, message, at: SourceLocation(path: entry.map { "\(url.path)!\($0)" } ?? url.path), hint: hint)])
        }
        guard let top = directory.topFolder else {
            throw refused(.zipTopFolder, "the zip holds no one top folder", entry: nil, hint: "Pack the issue with galley pack.")
        }
        var issue: ReadIssue?
        let folder = top + "/"
        let reader = try ZipEntryReader(path: url.path, directory: directory)
        var reading: String?
        do {
            while let entry = reader.next() {
                reading = entry.name
                guard !entry.isDirectory, entry.name.utf8.starts(with: folder.utf8) else { continue }
                let name = String(decoding: entry.name.utf8.dropFirst(folder.utf8.count), as: UTF8.self)
                if name == "latest.json" {
                    var manifest = ManifestStream { try reader.readChunk() }
                    issue = try streamManifest(&manifest, display: "\(url.path)!\(entry.name)", sink: sink)
                    if extractTo == nil { break }
                    continue
                }
                guard let extractTo else {
                    reader.skip()
                    continue
                }
                let target = extractTo.appending(path: name)
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                guard FileManager.default.createFile(atPath: target.path, contents: nil),
                      let handle = FileHandle(forWritingAtPath: target.path) else {
                    throw GalleyError("cannot write", id: .outputUnwritable, path: target.path)
                }
                defer { try? handle.close() }
                let limit = Int64(clamping: directory.entries[entry.number].uncompressedSize)
                var failure: Error?
                // A site's SVG is opened by itself (a link, a new tab) with the site's rights:
                // one that runs script is refused as validate and import refuse it, scanned as
                // it passes (by its name or its first bytes, as validate decides).
                var svg: SVGScanner?
                var first = true
                let (_, complete) = try reader.read(limit: limit) { chunk in
                    if first {
                        first = false
                        if name.lowercased().hasSuffix(".svg") || MediaFormat.sniff(Array(chunk.prefix(4096))) == .svg {
                            svg = SVGScanner()
                        }
                    }
                    svg?.feed(chunk)
                    if failure == nil {
                        do { try handle.write(contentsOf: chunk) } catch { failure = error }
                    }
                }
                if let failure { throw failure }
                guard complete else {
                    throw DiagnosticsError([ContentDamage.sizeMismatch(zip: url.path, entry: entry.name, bytes: nil, limit: limit)])
                }
                if let inspection = svg?.finish(), !inspection.activeContent.isEmpty {
                    let found = MediaChecks.svgFindings(inspection, name: name, at: "\(url.path)!\(entry.name)")
                    throw DiagnosticsError(found.filter { $0.severity == .error })
                }
            }
        } catch let error as ZipEntryReader.ReadError {
            throw DiagnosticsError([ContentDamage.unreadable(error, zip: url.path, entry: reading)])
        }
        guard let issue else {
            throw refused(.zipManifestMissing, "the zip has no `\(top)/latest.json`", entry: nil, hint: "Pack the issue with galley pack.")
        }
        return issue
    }

    /// Streams latest.json: each article goes to `sink` as it is parsed, with the issue's
    /// images read so far (they come before `articles` in what Galley and Linechef write).
    private func streamManifest(
        _ reader: inout ManifestStream, display: String,
        sink: (ReadArticle, [String], (@Sendable (String) -> String?)?) throws -> Bool
    ) throws -> ReadIssue {
        var issueImages: [String: AssetRecord] = [:]
        var membersSeen = 0
        var title: String?
        // The reader goes on to the end after `sink` is done: the issue's metadata (its
        // language) may follow the articles.
        var done = false
        do {
            let issue = try reader.read { _, node, members in
                if done { return }
                // Look only at the members that arrived since the last article.
                for member in members[membersSeen...] {
                    if member.key == "title" { title = member.value.string }
                    if member.key == "images" {
                        for asset in ManifestRecords.assets(LocatedJSON(value: .object([member]), line: 1, column: 1), "images", kind: .image) {
                            issueImages[asset.id] = asset
                        }
                    }
                }
                membersSeen = members.count
                guard let record = ManifestRecords.article(node) else { return }
                let own = Dictionary(record.assets.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
                let shared = issueImages
                done = try !sink(ReadArticle(record: record, lookup: { own[$0] ?? shared[$0] }, issueTitle: title), [], nil)
            }
            return ReadIssue(record: issue.record)
        } catch let failure as ManifestStream.Failure {
            // A manifest that cannot be read is the input's problem, reported as validate does.
            throw DiagnosticsError([Validator.diagnostic(for: failure, display: display)])
        }
    }
}


extension Renderer {
    /// Writes rendered HTML to `url` atomically; an existing file is replaced only with `force`.
    /// Writes one page or body, making its folder as needed (and removing it again on failure).
    public static func write(html: String, to url: URL, force: Bool) throws {
        let created = try FolderMaker.make(url.deletingLastPathComponent())
        do {
            try AtomicFile.write(html, to: url, replace: force)
        } catch {
            FolderMaker.removeEmpty(created)
            throw error
        }
    }
}
