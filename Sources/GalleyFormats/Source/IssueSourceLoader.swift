import Foundation
import Yams
import GalleyCore

/// Reads an issue source folder into an `IssueSource`, collecting every problem it finds
/// (not only the first) as located diagnostics.
public struct IssueSourceLoader: Sendable {
    public static let issueFileNames = ["issue.yaml", "issue.yml", "issue.json"]
    public static let bodyFileNames: [(String, BodyFormat)] = [
        ("article.md", .markdown), ("article.markdown", .markdown), ("article.html", .html), ("article.htm", .html),
    ]
    package static let issueKeys = [
        "title", "apple_id", "global_id", "description", "display_date", "publish_date", "last_updated",
        "metadata", "images", "order",
    ]
    package static let articleKeys = [
        "id", "title", "dek", "description", "section", "type", "author", "author_name", "author_url", "author_bio",
        "keywords", "commentary", "url", "source", "sku", "featured", "published", "date", "metadata", "assets",
    ]
    package static let assetKeys = ["file", "id", "caption", "credit", "alt", "thumbnail", "poster", "metadata"]

    public init() {}

    /// Loads the folder at `root`. Throws `GalleyError` when it is not a folder at all, and
    /// returns the findings (errors included) otherwise; `source` is `nil` when an error
    /// prevented reading the issue.
    public func load(_ root: URL) throws -> (source: IssueSource?, diagnostics: [Diagnostic]) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory) else {
            throw GalleyError("no such folder", id: .inputNotFound, path: root.path, hint: "Give the path of an issue source folder.")
        }
        guard isDirectory.boolValue else {
            throw GalleyError("not a folder", id: .inputKind, path: root.path,
                              hint: "`galley pack` takes an issue source folder (with issue.yaml inside).")
        }
        var log = DiagnosticLog()
        let tree = SourceTree(root: root)
        let source = loadIssue(tree, &log)
        return (log.hasErrors ? nil : source, log.items)
    }

    private func loadIssue(_ tree: SourceTree, _ log: inout DiagnosticLog) -> IssueSource? {
        let present = Self.issueFileNames.filter {
            FileManager.default.fileExists(atPath: tree.url($0).path)
        }
        guard let issueFile = present.first else {
            log.add(Diagnostic(
                .sourceIssueFileMissing, "the folder has no issue.yaml",
                at: SourceLocation(path: ""),
                hint: "Create issue.yaml with at least `title`, `apple_id` and `publish_date` (see docs/source-format.md)."))
            return nil
        }
        if present.count > 1 {
            log.add(Diagnostic(
                .sourceIssueFileAmbiguous, "the folder has \(present.joined(separator: " and ")); only one may exist",
                at: SourceLocation(path: issueFile), hint: "Keep one of them."))
            return nil
        }
        if let problem = tree.linkOutside(issueFile) {
            log.add(problem)
            return nil
        }
        guard let text = readText(tree.path(issueFile), display: issueFile, &log) else { return nil }
        let fields = YAMLFields(file: issueFile, lineOffset: 0)
        guard let node = fields.parse(text, into: &log) else {
            if !log.hasErrors {
                log.add(Diagnostic(.sourceFieldMissing, "\(issueFile) is empty", at: SourceLocation(path: issueFile),
                               hint: "Give at least `title`, `apple_id` and `publish_date`."))
            }
            return nil
        }
        guard let map = YAMLMapping(node, fields: fields, keyPath: "", log: &log, what: issueFile) else { return nil }
        map.reportUnknownKeys(Self.issueKeys, log: &log, what: issueFile)

        let title = map.string("title", required: true, log: &log)
        let appleID = map.string("apple_id", required: true, log: &log,
                                 hint: "Add the issue's store id, e.g. `apple_id: com.example.mag.issue.2015.01`.")
        if let appleID, let problem = Self.appleIDProblem(appleID) {
            log.add(Diagnostic(
                .sourceAppleIdInvalid, "`apple_id` \(problem): `\(appleID)`",
                at: fields.at(map.value("apple_id"), "apple_id"),
                hint: "It names the zip and its folder: use letters, digits, `.`, `-` and `_` only."))
        }
        let globalID = map.string("global_id", log: &log)
        if let globalID, let problem = GlobalID.problem(with: globalID) {
            log.add(Diagnostic(.sourceIdUnsafe, "`global_id` \(problem)", at: fields.at(map.value("global_id"), "global_id"),
                           hint: "Leave it out to get a derived id, or use 24 hex digits."))
        }
        let publishDate = map.date("publish_date", required: true, log: &log)
        let lastUpdated = map.date("last_updated", log: &log)
        let metadata = map.jsonObject("metadata", log: &log)
        let (images, _) = loadAssets(map, directory: "", owner: "", tree: tree, fields: fields, &log)
        let folders = articleFolders(tree, order: map, fields: fields, &log)

        guard let title, let appleID, let publishDate else { return nil }
        return IssueSource(
            issueFile: issueFile, appleID: appleID, globalID: globalID, title: title,
            description: map.string("description", log: &log) ?? "",
            displayDate: map.string("display_date", log: &log), publishDate: publishDate,
            lastUpdated: lastUpdated, metadata: metadata, images: images, articleFolders: folders, tree: tree)
    }

    static func appleIDProblem(_ id: String) -> String? {
        if id.isEmpty { return "is empty" }
        if id.utf8.count > 200 { return "is longer than 200 characters" }
        if id.hasPrefix(".") || id.hasPrefix("-") { return "starts with `\(id.first!)`" }
        let allowed = id.unicodeScalars.allSatisfy {
            $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "-" || $0 == "_")
        }
        return allowed ? nil : "contains characters other than letters, digits, `.`, `-` and `_`"
    }

    // MARK: Articles

    /// The article folders in issue order. Their fields are read one at a time, by
    /// `loadArticle`, so an issue of any size needs the memory of one article.
    private func articleFolders(
        _ tree: SourceTree, order map: YAMLMapping, fields: YAMLFields, _ log: inout DiagnosticLog
    ) -> [ArticleFolder] {
        let articlesURL = tree.url("articles")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: articlesURL.path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            log.add(Diagnostic(.sourceNoArticles, "the issue has no articles/ folder, so it has no articles",
                             at: SourceLocation(path: "articles"),
                             hint: "Create articles/<slug>/article.md for each article."))
            return []
        }
        if let problem = tree.linkOutside("articles") {
            log.add(problem)
            return []
        }
        var names: [String] = []
        for raw in rawDirectoryNames(articlesURL.path) ?? [] where raw.first != UInt8(ascii: ".") {
            guard let name = String(validating: raw, as: UTF8.self) else {
                let shown = String(decoding: raw, as: UTF8.self)
                log.add(Diagnostic(.sourceNameEncoding, "`articles/\(shown)` has a name that is not valid UTF-8; the article cannot be read",
                                   at: SourceLocation(path: "articles/\(shown)"),
                                   hint: "Rename it in UTF-8 (plain ASCII is safest), e.g. with `convmv -f latin1 -t utf8`."))
                continue
            }
            names.append(name)
        }
        var folders: [String] = []
        for name in names {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: articlesURL.appending(path: name).path, isDirectory: &isDir),
               isDir.boolValue {
                folders.append(name)
            } else {
                log.add(Diagnostic(.sourceStrayFile, "`articles/\(name)` is not an article folder; it is ignored",
                                 at: SourceLocation(path: "articles/\(name)"),
                                 hint: "Put each article in its own folder: articles/<slug>/article.md."))
            }
        }
        folders = orderFolders(folders, map: map, fields: fields, &log)

        var result: [ArticleFolder] = []
        var slugs: [String: String] = [:]
        for folder in folders {
            let slug = Self.slug(of: folder)
            if let other = slugs[slug.lowercased()] {
                log.add(Diagnostic(.sourceSlugDuplicate,
                               "the article folders `\(other)` and `\(folder)` have the same slug `\(slug)`",
                               at: SourceLocation(path: "articles/\(folder)"),
                               hint: "Rename one of them: ids are derived from the name without its number prefix."))
                continue
            }
            slugs[slug.lowercased()] = folder
            result.append(ArticleFolder(folder: folder, slug: slug))
        }
        return result
    }

    /// Reads one article's fields and checks its assets' paths (the body is read when packing).
    public func loadArticle(_ article: ArticleFolder, of source: IssueSource) -> (article: ArticleSource?, diagnostics: [Diagnostic]) {
        var log = DiagnosticLog()
        let loaded = loadArticle(folder: article.folder, slug: article.slug, tree: source.tree, &log)
        return (log.hasErrors ? nil : loaded?.article, log.items)
    }

    /// `loadArticle`, then the article's body prepared (`prepareBody`) from the same read of its
    /// body file (whose front matter holds the fields): pack's way. `article` and `body` are nil
    /// when the article could not be read.
    public func loadArticleAndBody(
        _ folder: ArticleFolder, of source: IssueSource, builder: BodyBuilder
    ) -> (article: ArticleSource?, body: PreparedBody?, files: [String: SourceFile], diagnostics: [Diagnostic]) {
        var log = DiagnosticLog()
        // An article whose fields have errors still has its body read, so that the body's own
        // problems are told with them; the caller plans no article with an error.
        guard let loaded = loadArticle(folder: folder.folder, slug: folder.slug, tree: source.tree, &log)
        else { return (nil, nil, [:], log.items) }
        let (body, files, problems) = prepareBody(loaded.body, of: loaded.article, in: source, builder: builder)
        return (loaded.article, body, files, log.items + problems)
    }

    /// The whole issue with every article read: convenient for small issues and tests.
    public func loadAll(_ root: URL) throws -> (source: IssueSource?, articles: [ArticleSource], diagnostics: [Diagnostic]) {
        let (source, diagnostics) = try load(root)
        guard let source else { return (nil, [], diagnostics) }
        var all = diagnostics
        var articles: [ArticleSource] = []
        for folder in source.articleFolders {
            let (article, found) = loadArticle(folder, of: source)
            all += found
            if let article { articles.append(article) }
        }
        return (all.contains { $0.severity == .error } ? nil : source, articles, all)
    }

    /// Folder order: the issue's `order` list when given, else by number prefix, then name.
    private func orderFolders(
        _ folders: [String], map: YAMLMapping, fields: YAMLFields, _ log: inout DiagnosticLog
    ) -> [String] {
        let natural = folders.map { (folder: $0, number: Self.numberPrefix($0) ?? Int.max) }
            .sorted { a, b in
                if a.number != b.number { return a.number < b.number }
                return a.folder.utf8.lexicographicallyPrecedes(b.folder.utf8)
            }
            .map(\.folder)
        guard let order = map.stringList("order", log: &log) else { return natural }
        var result: [String] = []
        for (index, entry) in order.enumerated() {
            guard let folder = natural.first(where: { $0 == entry || Self.slug(of: $0) == entry }) else {
                log.add(Diagnostic(.sourceOrderUnknown, "`order` names `\(entry)`, which is not a folder in articles/",
                               at: fields.at(map.value("order"), "order[\(index)]"),
                               hint: "List article folder names (or their slugs) exactly as they are spelled."))
                continue
            }
            if result.contains(folder) {
                log.add(Diagnostic(.sourceOrderDuplicate, "`order` lists `\(entry)` twice",
                               at: fields.at(map.value("order"), "order[\(index)]"), hint: "List each article once."))
                continue
            }
            result.append(folder)
        }
        for folder in natural where !result.contains(folder) {
            log.add(Diagnostic(.sourceOrderMissing, "the article folder `\(folder)` is not listed in `order`",
                           at: fields.at(map.value("order"), "order"),
                           hint: "Add `\(Self.slug(of: folder))` to `order` where it belongs, or remove the folder."))
        }
        return result
    }

    static func numberPrefix(_ folder: String) -> Int? {
        let digits = folder.prefix { $0.isASCII && $0.isNumber }
        return digits.isEmpty ? nil : Int(digits.prefix(18))
    }

    /// The folder name without an ordering prefix such as `01-` or `2_`.
    public static func slug(of folder: String) -> String {
        let digits = folder.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty else { return folder }
        let rest = folder.dropFirst(digits.count)
        let separators = rest.prefix { $0 == "-" || $0 == "_" || $0 == "." || $0 == " " }
        let slug = rest.dropFirst(separators.count)
        return separators.isEmpty || slug.isEmpty ? folder : String(slug)
    }

    /// The article's fields, and its body file's text split from its front matter.
    private func loadArticle(
        folder: String, slug: String, tree: SourceTree, _ log: inout DiagnosticLog
    ) -> (article: ArticleSource, body: FrontMatter.Split)? {
        let directory = "articles/\(folder)"
        if let problem = tree.linkOutside(directory) {
            log.add(problem)
            return nil
        }
        if let problem = SourceTree.nameProblem(folder) {
            log.add(Diagnostic(.sourceNameUnsafe, "the folder name `\(folder)` \(problem)", at: SourceLocation(path: directory),
                           hint: "Rename it using letters, digits, `.`, `-` and `_`."))
            return nil
        }
        // One listing of the folder answers every "is there an X" question below.
        // Names that are not UTF-8 decode with replacement characters: they match no name asked for.
        let present = Set((rawDirectoryNames(tree.path(directory)) ?? []).map { String(decoding: $0, as: UTF8.self) })
        let bodies = Self.bodyFileNames.filter { present.contains($0.0) }
        guard let (bodyName, format) = bodies.first else {
            log.add(Diagnostic(.sourceBodyMissing, "the article folder has no article.md or article.html",
                           at: SourceLocation(path: directory),
                           hint: "Add article.md (Markdown) or article.html with the article's text."))
            return nil
        }
        if bodies.count > 1 {
            log.add(Diagnostic(.sourceBodyAmbiguous,
                           "the article folder has \(bodies.map(\.0).joined(separator: " and ")); only one body may exist",
                           at: SourceLocation(path: directory), hint: "Keep one of them."))
            return nil
        }
        let bodyFile = "\(directory)/\(bodyName)"
        if let problem = tree.linkOutside(bodyFile) {
            log.add(problem)
            return nil
        }
        guard let text = readText(tree.path(bodyFile), display: bodyFile, &log) else { return nil }
        let front = FrontMatter.split(text)

        let sidecars = ["article.yaml", "article.yml"].filter { present.contains($0) }
        var fieldsFile = bodyFile
        var yamlText: String
        var lineOffset = 1
        if let sidecar = sidecars.first {
            if front.yaml != nil {
                log.add(Diagnostic(.sourceFieldsTwice,
                               "the article has both front matter in \(bodyName) and \(sidecar)",
                               at: SourceLocation(path: bodyFile, line: 1),
                               hint: "Keep the fields in one place: remove the front matter or the \(sidecar) file."))
                return nil
            }
            fieldsFile = "\(directory)/\(sidecar)"
            if let problem = tree.linkOutside(fieldsFile) {
                log.add(problem)
                return nil
            }
            guard let sidecarText = readText(tree.path(fieldsFile), display: fieldsFile, &log) else { return nil }
            yamlText = sidecarText
            lineOffset = 0
        } else if let yaml = front.yaml {
            yamlText = yaml
        } else if front.unclosed {
            log.add(Diagnostic(.sourceFrontMatterUnclosed, "the front matter that starts on line 1 is never closed",
                           at: SourceLocation(path: bodyFile, line: 1),
                           hint: "End the fields with a line holding only `---`, before the article's text."))
            return nil
        } else {
            log.add(Diagnostic(.sourceFieldsMissing, "the article has no front matter and no article.yaml",
                           at: SourceLocation(path: bodyFile, line: 1),
                           hint: "Start \(bodyName) with a block between `---` lines holding at least `title: ...`."))
            return nil
        }
        let fields = YAMLFields(file: fieldsFile, lineOffset: lineOffset)
        guard let node = fields.parse(yamlText, into: &log) else {
            if !log.hasErrors {
                log.add(Diagnostic(.sourceFieldMissing, "the article's fields are empty", at: SourceLocation(path: fieldsFile),
                               hint: "Give at least `title: ...`."))
            }
            return nil
        }
        guard let map = YAMLMapping(node, fields: fields, keyPath: "", log: &log, what: "the article's fields")
        else { return nil }
        map.reportUnknownKeys(Self.articleKeys, log: &log, what: "the article's fields")
        guard let title = map.string("title", required: true, log: &log) else { return nil }

        var article = ArticleSource(
            folder: folder, slug: slug, fieldsFile: fieldsFile, bodyFile: bodyFile, bodyFormat: format,
            bodyLineOffset: front.bodyLineOffset, title: title)
        article.id = map.string("id", log: &log)
        if let id = article.id, let problem = GlobalID.problem(with: id) {
            log.add(Diagnostic(.sourceIdUnsafe, "`id` \(problem)", at: fields.at(map.value("id"), "id"),
                           hint: "Leave it out to get a derived id, or use 24 hex digits."))
        }
        article.dek = map.string("dek", log: &log) ?? ""
        article.description = map.string("description", log: &log) ?? ""
        article.section = map.string("section", log: &log) ?? ""
        article.type = map.string("type", log: &log) ?? "article"
        loadAuthor(map, into: &article, &log)
        article.keywords = map.stringList("keywords", log: &log) ?? []
        article.commentary = map.string("commentary", log: &log) ?? ""
        article.url = map.string("url", log: &log) ?? ""
        article.source = map.string("source", log: &log) ?? ""
        article.sku = map.string("sku", log: &log)
        article.featured = map.bool("featured", log: &log) ?? false
        article.published = map.bool("published", log: &log) ?? true
        article.date = map.date("date", log: &log)
        article.dateLocation = fields.at(map.value("date"), "date")
        article.metadata = map.jsonObject("metadata", log: &log)
        (article.assets, article.unresolvedAssetKeys) = loadAssets(map, directory: directory, owner: slug, tree: tree, fields: fields, &log)
        return (article, front)
    }

    private func loadAuthor(_ map: YAMLMapping, into article: inout ArticleSource, _ log: inout DiagnosticLog) {
        if let author = map.value("author") {
            if case .scalar(let scalar) = author {
                article.authorName = scalar.string
            } else if let sub = YAMLMapping(author, fields: map.fields, keyPath: "author", log: &log, what: "`author`") {
                sub.reportUnknownKeys(["name", "url", "bio"], log: &log, what: "`author`")
                article.authorName = sub.string("name", log: &log) ?? ""
                article.authorURL = sub.string("url", log: &log) ?? ""
                article.authorBio = sub.string("bio", log: &log) ?? ""
            }
        }
        if let name = map.string("author_name", log: &log) { article.authorName = name }
        if let url = map.string("author_url", log: &log) { article.authorURL = url }
        if let bio = map.string("author_bio", log: &log) { article.authorBio = bio }
    }

    // MARK: Assets

    private func loadAssets(
        _ map: YAMLMapping, directory: String, owner: String, tree: SourceTree, fields: YAMLFields,
        _ log: inout DiagnosticLog
    ) -> (assets: [AssetSource], unresolvedKeys: [String]) {
        let listKey = owner.isEmpty ? "images" : "assets"
        guard let listNode = map.value(listKey) else { return ([], []) }
        guard case .sequence(let items) = listNode else {
            log.add(Diagnostic(.sourceTypeMismatch, "`\(listKey)` must be a list", at: fields.at(listNode, listKey),
                           hint: "Write one `- file: name.jpg` entry per line."))
            return ([], [])
        }
        var assets: [AssetSource] = []
        var unresolved: [String] = []
        var keys: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let path = "\(listKey)[\(index)]"
            let location = fields.at(item, path)
            var written: String
            var entry: YAMLMapping?
            switch item {
            case .scalar(let scalar):
                written = scalar.string
            default:
                guard let sub = YAMLMapping(item, fields: fields, keyPath: path, log: &log, what: "an asset") else { continue }
                sub.reportUnknownKeys(Self.assetKeys, log: &log, what: "an asset")
                guard let file = sub.string("file", required: true, log: &log,
                                            hint: "Name the asset's file with `file: photo.jpg`.") else { continue }
                written = file
                entry = sub
            }
            let resolved = tree.resolveFile(written, from: directory, at: location, what: "asset")
            guard case .file(let file) = resolved else {
                if case .problem(let diagnostic) = resolved { log.add(diagnostic) }
                var ignored = DiagnosticLog()  // the id's own problems are told once the file is there
                unresolved.append(entry?.string("id", log: &ignored) ?? written.split(separator: "/").last.map(String.init) ?? written)
                continue
            }
            var asset = AssetSource(key: written.split(separator: "/").last.map(String.init) ?? written,
                                    file: file, location: location)
            if let entry {
                asset.explicitID = entry.string("id", log: &log)
                if let id = asset.explicitID {
                    if let problem = GlobalID.problem(with: id) {
                        log.add(Diagnostic(.sourceIdUnsafe, "the asset `id` \(problem)",
                                       at: fields.at(entry.value("id"), "\(path).id"),
                                       hint: "Use letters, digits, `-` and `_`, or leave `id` out."))
                    }
                    asset.key = id
                }
                asset.caption = entry.string("caption", log: &log) ?? ""
                asset.credit = entry.string("credit", log: &log) ?? ""
                asset.alt = entry.string("alt", log: &log) ?? ""
                asset.metadata = entry.jsonObject("metadata", log: &log)
                for key in ["thumbnail", "poster"] {
                    guard let written = entry.string(key, log: &log) else { continue }
                    switch tree.resolveFile(written, from: directory, at: fields.at(entry.value(key), "\(path).\(key)"), what: key) {
                    case .file(let file) where key == "thumbnail": asset.thumbnail = file
                    case .file(let file): asset.poster = file
                    case .problem(let diagnostic): log.add(diagnostic)
                    }
                }
            }
            if let first = keys[asset.key] {
                log.add(Diagnostic(.sourceAssetKeyDuplicate,
                               "two assets have the key `\(asset.key)` (entries \(first + 1) and \(index + 1) of `\(listKey)`)",
                               at: location,
                               hint: "Give one of them an explicit `id:` so placeholders can tell them apart."))
                continue
            }
            keys[asset.key] = index
            assets.append(asset)
        }
        return (assets, unresolved)
    }

    // MARK: Body references

    /// Prepares an article's body (its file's text, front matter split off): converted to HTML,
    /// its local file references found and resolved to files of the issue folder, relative to
    /// the article's folder. A reference to a missing file is an error located where it is
    /// written, with a "did you mean" when a file's name is close.
    private func prepareBody(
        _ front: FrontMatter.Split, of article: ArticleSource, in source: IssueSource, builder: BodyBuilder
    ) -> (body: PreparedBody, files: [String: SourceFile], diagnostics: [Diagnostic]) {
        let prepared = builder.prepare(front.body, format: article.bodyFormat, file: article.bodyFile,
                                       lineOffset: front.bodyLineOffset)
        let tree = source.tree
        var files: [String: SourceFile] = [:]
        var diagnostics: [Diagnostic] = []
        var tried = Set<String>()
        for item in prepared.references where tried.insert(item.reference.path).inserted {
            let reference = item.reference
            let what = reference.isImage ? "image" : reference.attribute == "href" ? "linked" : "media"
            switch tree.resolveFile(reference.path, from: "articles/\(article.folder)", at: item.location, what: what) {
            case .file(let file): files[reference.path] = file
            case .problem(var diagnostic):
                diagnostic.message += " (`<\(reference.element) \(reference.attribute)>` in the body)"
                diagnostics.append(diagnostic)
            }
        }
        return (prepared, files, diagnostics)
    }

    // MARK: Files

    private func readText(_ path: String, display: String, _ log: inout DiagnosticLog) -> String? {
        guard let data = try? readWholeFile(path) else {
            log.add(Diagnostic(.sourceFileUnreadable, "cannot be read", at: SourceLocation(path: display),
                           hint: "Check that it is a readable file."))
            return nil
        }
        guard var text = String(validating: data, as: UTF8.self) else {
            log.add(Diagnostic(.sourceEncoding, "is not valid UTF-8 text", at: SourceLocation(path: display),
                           hint: "Save the file as UTF-8."))
            return nil
        }
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        return text
    }
}

/// Splits YAML front matter (between `---` lines at the top) from the body that follows.
package enum FrontMatter {
    /// What `split` returns.
    package typealias Split = (yaml: String?, body: String, bodyLineOffset: Int, unclosed: Bool)

    /// `yaml` is `nil` when the text has no front matter; `unclosed` when it opens one and never
    /// closes it.
    package static func split(_ text: String) -> Split {
        let normalized = LineEndings.normalize(text)
        let bytes = Array(normalized.utf8)
        guard bytes.count >= 4, bytes[0..<4].elementsEqual("---\n".utf8) else {
            return (nil, normalized, 0, false)
        }
        var lineStart = 4
        var line = 1
        while lineStart <= bytes.count {
            let lineEnd = bytes[lineStart...].firstIndex(of: 10) ?? bytes.count
            let content = bytes[lineStart..<lineEnd]
            line += 1
            if content.elementsEqual("---".utf8) || content.elementsEqual("...".utf8) {
                let yaml = String(decoding: bytes[4..<lineStart], as: UTF8.self)
                let bodyStart = min(lineEnd + 1, bytes.count)
                return (yaml, String(decoding: bytes[bodyStart...], as: UTF8.self), line, false)
            }
            lineStart = lineEnd + 1
        }
        return (nil, normalized, 0, true)
    }
}

/// Line endings: LF only, as Dumpling's placeholder search needs.
public enum LineEndings {
    public static func normalize(_ text: String) -> String {
        // The byte search runs on the contiguous UTF-8 (a generic `utf8.contains` walks the
        // view a byte at a time: 2% of packing 30,000 articles).
        guard ByteScan.contains(13, in: text) else { return text }
        return text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
    }
}
