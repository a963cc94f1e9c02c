import Foundation
import GalleyCore
import GalleyFormats
import GalleyKit

extension Renderer {
    /// One imported article, from the store by id, with its assets' files in the store.
    /// URLs are relative to `outputDirectory` unless `assetBase` is set, or `issueAssetBase`
    /// (which gets the article's issue global id: `serve` points them at its downloads).
    public func renderArticle(
        fromStore store: any IssueReader, id: String, issue: String?, outputDirectory: URL,
        issueAssetBase: ((String) -> String)? = nil
    ) throws -> (html: String, warnings: [Diagnostic]) {
        let detail = try store.article(id, issue: issue)
        let issueImages = try store.assets(AssetFilter(issue: detail.article.issueGlobalID, kind: .image, issueOwn: true))
        func record(_ asset: StoredAsset) -> AssetRecord {
            AssetRecord(
                id: asset.globalID, kind: MediaKind(rawValue: asset.kind) ?? .image, caption: asset.caption,
                source: asset.credit, fileName: asset.fileName, crop350: asset.crop350,
                metadata: asset.metadata.flatMap(JSONValue.init(parsing:)))
        }
        let own = Dictionary(detail.assets.map { ($0.globalID, record($0)) }, uniquingKeysWith: { a, _ in a })
        let shared = Dictionary(issueImages.map { ($0.globalID, record($0)) }, uniquingKeysWith: { a, _ in a })
        // A folder store keeps an issue's files in one folder; a blob store by content, so each
        // name is looked up (the file, or a thumbnail no asset lists).
        let folder = (detail.assets.first ?? issueImages.first).map { URL(fileURLWithPath: $0.path).deletingLastPathComponent().path }
        var markup: AssetMarkup
        if let base = options.assetBase ?? issueAssetBase?(detail.article.issueGlobalID) {
            markup = AssetMarkup(style: options.style, assetBase: base)
        } else {
            let from = outputDirectory.standardizedFileURL.path
            let issueID = detail.article.issueGlobalID
            markup = AssetMarkup(style: options.style) { name in
                let path = (try? store.file(name, issue: issueID).path) ?? folder.map { $0 + "/" + name } ?? name
                return path.hasPrefix("/") ? HTMLText.urlPath(relativePath(from: from, to: path)) : path
            }
        }
        markup.template = options.assetTemplate
        var article = ArticleRecord(
            globalID: detail.article.globalID, title: detail.article.title, body: detail.body,
            dateLastUpdated: detail.article.date)
        article.dek = detail.article.dek
        article.section = detail.article.section
        article.authorName = detail.article.author
        article.authorURL = detail.authorURL
        let (body, warnings) = try expand(article, lookup: { own[$0] ?? shared[$0] }, markup: markup)
        guard options.page else { return (body, warnings) }
        let page = pageRenderer(language: options.language ?? "en")
        return (page.article(article, body: body, issueTitle: nil, indexLink: nil), warnings)
    }
}
