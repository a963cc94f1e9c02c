import Foundation
import Mustache
import GalleyCore
import GalleyFormats

/// Complete, accessible HTML5 documents around rendered bodies, and the preview site's index.
public struct PageRenderer: Sendable {
    public var language: String
    /// A publisher's Mustache template for article pages, used instead of the built-in page.
    public var template: MustacheTemplate?
    /// Link this stylesheet (a site's shared `style.css`) instead of inlining it.
    public var stylesheetLink: String?
    /// The Content-Security-Policy every page carries in a `<meta>` (nil: none, for
    /// `--trust-bodies`). The default forbids script, plugins, frames, forms and `<base>`.
    public var contentSecurityPolicy: String? = PageRenderer.noScriptPolicy

    /// A rendered site's policy: pictures, sound, video and fonts from the site's own files
    /// only (`file:` for a site opened from disk), styles from the page itself, and nothing
    /// that runs. A body naming a picture elsewhere does not reach out to that host.
    public static let noScriptPolicy = policy(allowingMedia: ["'self'", "data:", "file:"])

    /// The policy of a page whose media and fonts come from `sources` (CSP source expressions)
    /// and nothing else.
    public static func policy(allowingMedia sources: [String]) -> String {
        let media = sources.joined(separator: " ")
        let style = sources.contains("file:") ? "'self' 'unsafe-inline' file:" : "'self' 'unsafe-inline'"
        return "default-src 'none'; img-src \(media); media-src \(media); "
            + "style-src \(style); font-src \(media); script-src 'none'; object-src 'none'; "
            + "frame-src 'none'; child-src 'none'; worker-src 'none'; base-uri 'none'; form-action 'none'"
    }

    /// The policy of a site whose assets are at `assetBase`: the site's own files, and the
    /// base's origin when it is an absolute http(s) URL (a CDN).
    public static func policy(assetBase: String?) -> String {
        guard let assetBase, let url = URL(string: assetBase), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else { return noScriptPolicy }
        let origin = "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
        return policy(allowingMedia: ["'self'", "data:", "file:", origin])
    }

    var policyMeta: String {
        contentSecurityPolicy.map { "<meta http-equiv=\"Content-Security-Policy\" content=\"\(HTMLText.attribute($0))\">\n" } ?? ""
    }

    public init(language: String = "en") { self.language = language }

    public static let stylesheet = """
        :root{color-scheme:light dark;--ink:#1d1d1f;--muted:#5f6368;--paper:#fffdf8;--rule:#e4ded3}
        @media (prefers-color-scheme:dark){:root{--ink:#eee;--muted:#aaa;--paper:#16161a;--rule:#333}}
        *{box-sizing:border-box}body{margin:0;background:var(--paper);color:var(--ink);font:1.0625rem/1.6 Georgia,"Times New Roman",serif}
        main{max-width:42rem;margin:0 auto;padding:1.5rem 1.25rem 4rem}
        header .section{font:600 .8rem/1.2 system-ui,sans-serif;letter-spacing:.08em;text-transform:uppercase;color:var(--muted);margin:0}
        h1{font-size:clamp(1.8rem,5vw,2.6rem);line-height:1.15;margin:.3rem 0}
        .dek{font-size:1.2rem;color:var(--muted);margin:.3rem 0 1rem}
        .byline{font:.9rem/1.4 system-ui,sans-serif;color:var(--muted);border-bottom:1px solid var(--rule);padding-bottom:1rem}
        img,video{max-width:100%;height:auto;display:block}audio{width:100%}
        figure{margin:1.5rem 0}figcaption{font:.85rem/1.4 system-ui,sans-serif;color:var(--muted);margin-top:.4rem}
        figcaption .credit{font-style:italic}
        table{border-collapse:collapse;width:100%;margin:1.5rem 0}td,th{border-bottom:1px solid var(--rule);padding:.3rem .5rem}th{text-align:start}
        td[align=right],th[align=right]{text-align:right}td[align=center],th[align=center]{text-align:center}
        pre{overflow-x:auto;background:var(--rule);padding:.75rem 1rem;border-radius:4px;line-height:1.4}
        code{font:.9em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
        blockquote{margin:1.5rem 0;padding:0 1rem;border-left:3px solid var(--rule);color:var(--muted)}
        .footnotes{font-size:.9rem;border-top:1px solid var(--rule);margin-top:2rem;color:var(--muted)}
        sup a{text-decoration:none}li input[type=checkbox]{margin-right:.4rem}.contains-task-list{list-style:none;padding-left:1rem}
        nav a,.issue a{color:inherit}.issue ol{list-style:none;padding:0}
        .issue li a{font-size:1.15rem;font-weight:600;line-height:1.3}.issue li .dek{font-size:.95rem;margin:0}
        .pager{display:flex;justify-content:space-between;gap:1rem;border-top:1px solid var(--rule);margin-top:2rem;padding-top:1rem;font:.95rem/1.4 system-ui,sans-serif}
        .pager a[rel=next]{margin-left:auto;text-align:right}
        .issue li{display:flex;gap:1rem;align-items:center;border-bottom:1px solid var(--rule);padding:.75rem 0}
        .issue li img{width:5.5rem;height:5.5rem;object-fit:cover;flex:none}
        .cover{max-width:20rem;margin:1rem auto}
        """

    package func document(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="\(HTMLText.attribute(language))">
        <head>
        <meta charset="utf-8">
        \(policyMeta)<meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTMLText.text(title))</title>
        \(stylesheetLink.map { "<link rel=\"stylesheet\" href=\"\(HTMLText.attribute($0))\">" } ?? "<style>\(Self.stylesheet)</style>")
        </head>
        <body>
        \(body)
        </body>
        </html>

        """
    }

    /// What a page template sees: `{{title}}`, `{{dek}}`, `{{section}}`, `{{author}}`,
    /// `{{author_url}}`, `{{date}}` (yyyy-MM-dd), `{{language}}`, `{{issue_title}}`,
    /// `{{index_url}}`, `{{{stylesheet}}}` and `{{{body}}}` (the rendered body: use three braces).
    public func context(_ article: ArticleRecord, body: String, issueTitle: String?, indexLink: String?) -> [String: Any] {
        var context: [String: Any] = [
            "title": article.title, "dek": article.dek, "section": article.section, "author": article.authorName,
            "author_url": article.authorURL, "language": language, "body": body, "stylesheet": Self.stylesheet,
            "date": String(article.dateLastUpdated.prefix(10)), "id": article.globalID,
        ]
        if let issueTitle { context["issue_title"] = issueTitle }
        if let indexLink { context["index_url"] = indexLink }
        return context
    }

    /// A link to a neighbouring page.
    public struct Link: Sendable, Hashable {
        public var href: String
        public var title: String

        public init(href: String, title: String) {
            self.href = href
            self.title = title
        }
    }

    /// One article as a page: section, title, dek, byline, date, then the rendered body, and in
    /// a site the previous and next articles in issue order.
    public func article(_ article: ArticleRecord, body: String, issueTitle: String?, indexLink: String?,
                        previous: Link? = nil, next: Link? = nil) -> String {
        if let template {
            var values = context(article, body: body, issueTitle: issueTitle, indexLink: indexLink)
            if let previous { (values["previous_url"], values["previous_title"]) = (previous.href, previous.title) }
            if let next { (values["next_url"], values["next_title"]) = (next.href, next.title) }
            return withPolicy(template.render(values))
        }
        var header = "<header>\n"
        if !article.section.isEmpty { header += "<p class=\"section\">\(HTMLText.text(article.section))</p>\n" }
        header += "<h1>\(HTMLText.text(article.title))</h1>\n"
        if !article.dek.isEmpty { header += "<p class=\"dek\">\(HTMLText.text(article.dek))</p>\n" }
        var byline: [String] = []
        if !article.authorName.isEmpty {
            let name = HTMLText.text(article.authorName)
            if article.authorURL.lowercased().hasPrefix("http://") || article.authorURL.lowercased().hasPrefix("https://") {
                byline.append("By <a rel=\"author\" href=\"\(HTMLText.attribute(article.authorURL))\">\(name)</a>")
            } else {
                byline.append("By \(name)")
            }
        }
        if let date = ISODateTime(parsing: String(article.dateLastUpdated.prefix(19))) {
            let label = "\(date.day) \(ISODateTime.monthNames[date.month - 1]) \(date.year)"
            byline.append("<time datetime=\"\(pad(date.year, 4))-\(pad(date.month, 2))-\(pad(date.day, 2))\">\(label)</time>")
        }
        if !byline.isEmpty { header += "<p class=\"byline\">\(byline.joined(separator: " · "))</p>\n" }
        header += "</header>\n"
        var nav = ""
        if let indexLink {
            nav = "<nav><a href=\"\(HTMLText.attribute(indexLink))\">← \(HTMLText.text(issueTitle ?? "Contents"))</a></nav>\n"
        }
        var pager = ""
        if previous != nil || next != nil {
            pager = "<nav class=\"pager\">"
            if let previous {
                pager += "<a rel=\"prev\" href=\"\(HTMLText.attribute(previous.href))\">← \(HTMLText.text(previous.title))</a>"
            }
            if let next {
                pager += "<a rel=\"next\" href=\"\(HTMLText.attribute(next.href))\">\(HTMLText.text(next.title)) →</a>"
            }
            pager += "</nav>\n"
        }
        let main = "<main>\n\(nav)<article>\n\(header)<div class=\"body\">\n\(body)\n</div>\n</article>\n\(pager)</main>"
        return document(title: article.title + (issueTitle.map { " · \($0)" } ?? ""), body: main)
    }

    /// A template's page with the policy's `<meta>` right after `<head>` (or `<html>`), unless
    /// the template states a policy itself.
    func withPolicy(_ page: String) -> String {
        guard !policyMeta.isEmpty, page.range(of: "Content-Security-Policy", options: .caseInsensitive) == nil else { return page }
        for tag in ["<head", "<html"] {
            if let open = page.range(of: tag, options: .caseInsensitive),
               let close = page[open.upperBound...].firstIndex(of: ">") {
                let after = page.index(after: close)
                return String(page[..<after]) + "\n" + policyMeta.dropLast() + String(page[after...])
            }
        }
        return policyMeta + page
    }

    public struct Entry: Sendable {
        public var title: String
        public var dek: String
        public var href: String
        public var thumbnail: String?
        public var thumbnailAlt: String
    }

    /// The preview site's index: cover, then the articles in issue order with thumbnails.
    public func index(_ issue: IssueRecord, cover: String?, coverAlt: String, entries: [Entry]) -> String {
        var body = "<main class=\"issue\">\n<header>\n<p class=\"section\">\(HTMLText.text(issue.displayDate))</p>\n"
        body += "<h1>\(HTMLText.text(issue.title))</h1>\n"
        if !issue.description.isEmpty { body += "<p class=\"dek\">\(HTMLText.text(issue.description))</p>\n" }
        body += "</header>\n"
        if let cover {
            body += "<img class=\"cover\" src=\"\(HTMLText.attribute(cover))\" alt=\"\(HTMLText.attribute(coverAlt))\">\n"
        }
        body += "<ol>\n"
        for entry in entries {
            body += "<li>"
            if let thumbnail = entry.thumbnail {
                body += "<img src=\"\(HTMLText.attribute(thumbnail))\" alt=\"\(HTMLText.attribute(entry.thumbnailAlt))\" loading=\"lazy\">"
            }
            body += "<div><a href=\"\(HTMLText.attribute(entry.href))\">\(HTMLText.text(entry.title))</a>"
            if !entry.dek.isEmpty { body += "<br><span class=\"dek\">\(HTMLText.text(entry.dek))</span>" }
            body += "</div></li>\n"
        }
        body += "</ol>\n</main>"
        return document(title: issue.title, body: body)
    }
}
