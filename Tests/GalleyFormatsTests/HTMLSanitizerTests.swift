import Foundation
import Testing
@testable import GalleyFormats

/// The body sanitizer on ordinary bodies (which must come out as they went in, give or take
/// spelling) and on the vectors that ran script in the preview before it existed.
@Suite struct HTMLSanitizerTests {
    static let sanitizer = HTMLSanitizer { $0.hasPrefix("<!-- [ASSET: ") && $0.hasSuffix("] -->") }

    @Test(arguments: [
        "<p>Intro.</p>\n<!-- [ASSET: photo-1] -->\n<p>After.</p>\n",
        "Bare text, then <em>emphasis</em> &amp; more.",
        "<h2 id=\"s\">Head</h2>\n<ul>\n<li>One</li>\n<li>Two</li>\n</ul>\n",
        "<table>\n<thead>\n<tr>\n<th align=\"right\">A</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td align=\"right\">1</td>\n</tr>\n</tbody>\n</table>\n",
        "<pre><code class=\"language-swift\">let a = 1 &lt; 2\n</code></pre>\n",
        "<pre>\n\nfirst line blank</pre>",
        "<p><a href=\"https://example.com/a?b=1&amp;c=2\">link</a> <a href=\"#fn1\">1</a> <a href=\"mailto:x@example.com\">m</a></p>",
        "<figure><img src=\"photo.jpg\" alt=\"A &quot;photo&quot;\" width=\"2\" height=\"2\"><figcaption>Cap</figcaption></figure>",
        "<blockquote>\n<p>Quote</p>\n</blockquote>\n<p><del>old</del> <input type=\"checkbox\" disabled> task</p>",
    ])
    func ordinaryBodiesComeOutAsTheyWentIn(_ body: String) {
        let result = Self.sanitizer.sanitize(body)
        #expect(result.html == body)
        #expect(result.removed.isEmpty)
    }

    /// Each vector ran script in headless Chromium from a preview page before the sanitizer.
    @Test(arguments: [
        ("<script>alert(1)</script>", "<script>"),
        ("<img src=\"photo.jpg\" onerror=\"alert(1)\">", "onerror on <img>"),
        ("<svg onload=\"alert(1)\"><circle r=\"1\"/></svg>", "<svg>"),
        ("<iframe srcdoc=\"&lt;script&gt;alert(1)&lt;/script&gt;\"></iframe>", "<iframe>"),
        ("<!-- [ASSET: x --><script>alert(1)</script><!-- ] -->", "<script>"),
        ("<a href=\" java\tscript:alert(1)\">x</a>", "javascript: in href on <a>"),
        ("<details open ontoggle=\"alert(1)\"><summary>s</summary></details>", "ontoggle on <details>"),
        ("<video><source src=\"x.mp4\" onerror=\"alert(1)\"></video>", "onerror on <source>"),
        ("<object data=\"javascript:alert(1)\"></object>", "<object>"),
        ("<embed src=\"data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;\">", "<embed>"),
        ("<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">", "<meta>"),
        ("<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>", "<math>"),
        ("<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>", "<noscript>"),
        ("<a href=\"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\">x</a>", "data: in href on <a>"),
        ("<p style=\"color:red\" onmouseover=\"alert(1)\">x</p>", "onmouseover on <p>"),
        ("<!-- a --!><script>alert(1)</script> -->", "<script>"),
    ])
    func vectorsAreRemovedAndReported(_ body: String, _ what: String) {
        let result = Self.sanitizer.sanitize(body)
        #expect(result.removed.map(\.what).contains(what), "\(result.removed)")
        let lower = result.html.lowercased()
        for marker in ["<script", "onerror", "onload", "ontoggle", "onmouseover", "javascript:", "<iframe", "<svg", "<object",
                       "<embed", "<meta", "<math", "<style", "srcdoc", "data:text"] {
            #expect(!lower.contains(marker), "\(marker) survived in \(result.html)")
        }
    }

    @Test func onlyDisabledCheckboxesSurviveAsTaskListItems() {
        let result = Self.sanitizer.sanitize("<input type=\"checkbox\" checked disabled onclick=\"x()\"><input type=\"text\" value=\"a\"><input type=\"checkbox\">")
        #expect(result.html == "<input type=\"checkbox\" disabled checked>")
        #expect(result.removed.map(\.what) == ["<input>", "<input>"])
    }

    /// One reading of a URL's scheme for validate's body check, the SVG scan and the sanitizer:
    /// every spelling a browser runs as script is caught by all three alike.
    @Test(arguments: ["javascript:x()", " JavaScript:x()", "java\nscript:x()", "java\tscript:x()", "\u{1}javascript:x()",
                      "&#106;avascript:x()", "javascript&#58;x()"])
    func validateTheSVGScanAndRenderReadJavaScriptURLsAlike(_ href: String) {
        let body = "<a href=\"\(href)\">x</a>"
        #expect(HTMLInspector.inspect(body).javascriptURLs.count == 1, "validate: \(href)")
        #expect(Self.sanitizer.sanitize(body).removed.map(\.kind) == [.url], "render: \(href)")
    }

    /// In XML a raw tab or newline in an attribute becomes a space (so `java script:` is a path),
    /// but a character reference keeps it, and the browser then strips it.
    @Test(arguments: ["javascript:x()", " JavaScript:x()", "java&#10;script:x()", "java&#9;script:x()", "&#106;avascript:x()",
                      "javascript&#58;x()"])
    func theSVGScanReadsJavaScriptURLsAsBrowsersDo(_ href: String) {
        let svg = SVGScannerTests.scan(SVGScannerTests.svg + "<a href=\"\(href)\"/></svg>")
        #expect(svg.activeContent.map(\.what) == ["javascript: in href on <a>"], "svg: \(href)")
    }

    @Test(arguments: [("https://a.example/", "https"), ("/path:with:colons", nil), ("page.html#a:b", nil),
                      ("java script:x", nil), ("1http:x", nil), ("mailto:a@b", "mailto"), ("", nil)] as [(String, String?)])
    func schemesAreReadAsBrowsersReadThem(_ url: String, _ scheme: String?) {
        #expect(URLScheme.of(url) == scheme)
    }

    @Test func placeholdersStayAndOtherCommentsGo() {
        let result = Self.sanitizer.sanitize("<p>a</p><!-- note to self --><!-- [ASSET: photo-1] --><!-- [ASSET: a--b] -->")
        #expect(result.html == "<p>a</p><!-- [ASSET: photo-1] -->")
        #expect(result.removed.isEmpty)
    }

    @Test func removalsCarryTheirLine() {
        let result = Self.sanitizer.sanitize("<p>one</p>\n<p>two</p>\n<script>x()</script>\n<p onclick=\"y()\">four</p>\n")
        #expect(result.removed == [Removal(kind: .element, what: "<script>", line: 3),
                                   Removal(kind: .attribute, what: "onclick on <p>", line: 4)])
    }

    @Test func dataImagesStayInImagesOnly() {
        let image = Self.sanitizer.sanitize("<img src=\"data:image/png;base64,iVBORw0KGgo=\" alt=\"\">")
        #expect(image.removed.isEmpty)
        let link = Self.sanitizer.sanitize("<a href=\"data:image/png;base64,iVBORw0KGgo=\">x</a>")
        #expect(link.removed.map(\.kind) == [.url])
    }
}
