import Foundation
import Mustache
import GalleyCore
import GalleyFormats

/// How a placeholder becomes HTML.
public enum RenderStyle: String, Sendable, CaseIterable {
    /// `<figure>` with `<img>`, `<audio>` or `<video>` and `<figcaption>`: accessible, escaped.
    case semantic
    /// The markup Dumpling's `replacePatternsWithAssets` produced (wire format §3.2), escaped.
    case dumpling
}

/// Writes the HTML for one asset.
public struct AssetMarkup: Sendable {
    public var style: RenderStyle
    /// Turns an asset's `file_name` into the URL written in the page.
    public var locate: @Sendable (String) -> String
    /// A publisher's Mustache template for assets, used instead of `style` when set.
    public var template: MustacheTemplate?

    /// URLs are `assetBase` followed by the percent-encoded file name: `""` or `"../assets/"`
    /// (relative), `"https://cdn.example.com/x/"`, `"file:///..."`.
    public init(style: RenderStyle = .semantic, assetBase: String = "") {
        self.style = style
        self.locate = { assetBase + HTMLText.urlPath($0) }
    }

    public init(style: RenderStyle, locate: @escaping @Sendable (String) -> String) {
        self.style = style
        self.locate = locate
    }

    public func url(_ fileName: String) -> String { locate(fileName) }

    public func html(for asset: AssetRecord) -> String {
        if let template { return template.render(context(for: asset)) }
        switch style {
        case .semantic: return semantic(asset)
        case .dumpling: return dumpling(asset)
        }
    }

    package func semantic(_ asset: AssetRecord) -> String {
        let src = HTMLText.attribute(url(asset.fileName))
        let metadata = asset.metadata
        var media: String
        switch asset.kind {
        case .image:
            let alt = metadata?["alt"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? asset.caption
            media = "<img src=\"\(src)\" alt=\"\(HTMLText.attribute(alt))\" loading=\"lazy\" decoding=\"async\""
            if let width = metadata?["width"]?.numberText.flatMap(Int.init),
               let height = metadata?["height"]?.numberText.flatMap(Int.init) {
                media += " width=\"\(width)\" height=\"\(height)\""
            }
            media += ">"
        case .sound:
            media = "<audio controls preload=\"none\"><source src=\"\(src)\" type=\"\(HTMLText.attribute(mimeType(asset)))\"></audio>"
        case .video:
            media = "<video controls preload=\"metadata\" playsinline"
            if asset.crop350 != asset.fileName, !asset.crop350.isEmpty {
                media += " poster=\"\(HTMLText.attribute(url(asset.crop350)))\""
            }
            media += "><source src=\"\(src)\" type=\"\(HTMLText.attribute(mimeType(asset)))\"></video>"
        }
        var caption = ""
        if !asset.caption.isEmpty { caption += "<span class=\"caption\">\(HTMLText.text(asset.caption))</span>" }
        if !asset.source.isEmpty {
            caption += (caption.isEmpty ? "" : " ") + "<span class=\"credit\">\(HTMLText.text(asset.source))</span>"
        }
        let figcaption = caption.isEmpty ? "" : "<figcaption>\(caption)</figcaption>"
        return "<figure class=\"asset asset-\(asset.kind.rawValue)\">\(media)\(figcaption)</figure>"
    }

    /// Wire format §3.2, with caption and credit escaped and `<audio>`/`<video>` as Dumpling
    /// wrote them (self-closed). docs/render.md lists every difference.
    package func dumpling(_ asset: AssetRecord) -> String {
        let u = HTMLText.attribute(url(asset.fileName))
        var h = "<div class='article_image'>"
        switch asset.kind {
        case .image: h += "<img src='\(u)' alt='Tap to enlarge image' />"
        case .sound: h += "<audio src='\(u)' controls='controls' />"
        case .video: h += "<video src='\(u)' controls />"
        }
        var cs = ""
        if !asset.source.isEmpty { cs += "<span class='source'>\(HTMLText.text(asset.source))</span>" }
        if !asset.caption.isEmpty { cs += "<span class='caption'>\(HTMLText.text(asset.caption))</span>" }
        if !cs.isEmpty { h += "<div class='article_caption'>\(cs)</div>" }
        return h + "</div>"
    }

    /// What a template sees: `{{url}}`, `{{thumbnail_url}}`, `{{caption}}`, `{{credit}}`,
    /// `{{alt}}`, `{{width}}`, `{{height}}`, `{{mime_type}}`, `{{id}}`, `{{kind}}`, and the
    /// sections `{{#image}}`, `{{#sound}}`, `{{#video}}`. Mustache escapes `{{...}}` for HTML.
    public func context(for asset: AssetRecord) -> [String: Any] {
        var context: [String: Any] = [
            "id": asset.id, "kind": asset.kind.rawValue, "url": url(asset.fileName),
            "thumbnail_url": url(asset.crop350), "caption": asset.caption, "credit": asset.source,
            "alt": asset.metadata?["alt"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? asset.caption,
            "mime_type": mimeType(asset), "image": asset.kind == .image, "sound": asset.kind == .sound,
            "video": asset.kind == .video,
        ]
        if let width = asset.metadata?["width"]?.numberText { context["width"] = width }
        if let height = asset.metadata?["height"]?.numberText { context["height"] = height }
        return context
    }

    package func mimeType(_ asset: AssetRecord) -> String {
        if let given = asset.metadata?["mime_type"]?.stringValue, !given.isEmpty { return given }
        let ext = (asset.fileName as NSString).pathExtension.lowercased()
        let format = MediaFormat.allCases.first { $0.kind == asset.kind && $0.extensions.contains(ext) }
        return format?.mimeType ?? (asset.kind == .sound ? "audio/mpeg" : asset.kind == .video ? "video/mp4" : "image/jpeg")
    }
}
