import Foundation
import GalleyCore
import GalleyFormats
import GalleyKit

extension Renderer {
    /// One imported article, from the store by id, with its assets' files in the store.
    /// URLs are relative to `outputDirectory` unless `assetBase` is set, or `issueAssetBase`
    /// (which gets the article's issue global id: `serve` points them at its downloads).
    public func renderArticle(
        fromStore store: any IssueStore, id: String, issue: String?, outputDirectory: URL,
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
        // Every file of this issue sits in one folder of the store.
        let folder = (detail.assets.first ?? issueImages.first).map { URL(fileURLWithPath: $0.path).deletingLastPathComponent().path }
        var markup: AssetMarkup
        if let base = options.assetBase ?? issueAssetBase?(detail.article.issueGlobalID) {
            markup = AssetMarkup(style: options.style, assetBase: base)
        } else if let folder {
            let from = outputDirectory.standardizedFileURL.path
            markup = AssetMarkup(style: options.style) { HTMLText.urlPath(relativePath(from: from, to: folder + "/" + $0)) }
        } else {
            markup = AssetMarkup(style: options.style, assetBase: "")
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
