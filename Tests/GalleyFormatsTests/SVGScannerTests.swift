import Foundation
import Testing
@testable import GalleyFormats

/// The SVG scanner on the ways script hides in an SVG, fed a byte at a time as well as whole.
@Suite struct SVGScannerTests {
    static func scan(_ text: String, chunk: Int = 1 << 16) -> SVGInspection {
        let scanner = SVGScanner()
        let bytes = Array(text.utf8)
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            scanner.feed(bytes[start..<min(bytes.count, start + chunk)])
        }
        return scanner.finish()
    }

    static let svg = #"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">"#

    @Test(arguments: [
        (svg + "<script>alert(1)</script></svg>", "<script>"),
        (svg + #"<html:script xmlns:html="http://www.w3.org/1999/xhtml">alert(1)</html:script></svg>"#, "<html:script>"),
        (svg + #"<rect ONCLICK="alert(1)"/></svg>"#, "ONCLICK on <rect>"),
        (svg + #"<a href=" &#x09;JaVa&#115;cript:alert(1)"><text>x</text></a></svg>"#, "javascript: in href on <a>"),
        (svg + #"<a xlink:href="javascript:alert(1)"/></svg>"#, "javascript: in xlink:href on <a>"),
        (svg + #"<a><set attributeName="href" to="javascript:alert(1)"/></a></svg>"#, "javascript: in to on <set>"),
        (svg + #"<foreignObject><div xmlns="http://www.w3.org/1999/xhtml"/></foreignObject></svg>"#, "<foreignObject>"),
        (svg + #"<foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" srcdoc="x"/></foreignObject></svg>"#, "<iframe>"),
        ("<?xml-stylesheet type=\"text/xsl\" href=\"run.xsl\"?>" + svg + "</svg>", "XSLT stylesheet"),
        ("<!DOCTYPE svg [<!ENTITY s \"<script>alert(1)</script>\">]>" + svg + "&s;</svg>", "<script>"),
    ])
    func activeContentIsFound(_ text: String, _ what: String) {
        for chunk in [1, 7, 1 << 16] {
            let result = Self.scan(text, chunk: chunk)
            #expect(result.activeContent.map(\.what).contains(what), "chunk \(chunk): \(result)")
            #expect(result.malformed == nil, "chunk \(chunk)")
        }
    }

    @Test func aPlainDrawingWithEntitiesAsIllustratorWritesThemIsClean() {
        let text = """
            <?xml version="1.0" encoding="utf-8"?>
            <!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" [
              <!ENTITY ns_svg "http://www.w3.org/2000/svg">
              <!ENTITY ns_xlink "http://www.w3.org/1999/xlink">
            ]>
            <svg xmlns="&ns_svg;" xmlns:xlink="&ns_xlink;" width="10" height="10">
              <style>.a { fill: #c33; }</style>
              <a xlink:href="https://example.com/story"><rect class="a" width="10" height="10"/></a>
              <text>one &amp; two</text>
            </svg>
            """
        let result = Self.scan(text, chunk: 3)
        #expect(result.activeContent.isEmpty)
        #expect(result.malformed == nil)
    }

    @Test func anEntityBombIsReportedAsMalformedAtOnceNotExpanded() {
        var lines = [#"<!DOCTYPE svg [<!ENTITY l0 "lol">"#]
        for level in 1...9 {
            lines.append("<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">")
        }
        let text = lines.joined(separator: "\n") + "]>\n" + Self.svg + "<text>&l9;</text></svg>"
        let clock = ContinuousClock()
        var result = SVGInspection()
        let elapsed = clock.measure { result = Self.scan(text) }
        #expect(result.malformed != nil)
        #expect(elapsed < .seconds(5))
    }

    @Test func malformedXMLSaysWhereAndWhy() {
        let result = Self.scan(Self.svg + "\n<rect>\n</svg>")
        #expect(result.malformed?.line == 3)
        #expect(result.malformed?.what.contains("mismatch") == true)
    }

    @Test func manyFindingsAreCountedButNotAllKept() {
        let text = Self.svg + String(repeating: #"<rect onclick="x()"/>"#, count: 500) + "</svg>"
        let result = Self.scan(text)
        #expect(result.activeContent.count == SVGScanner.itemLimit + 1)
        #expect(result.activeContent.last?.what == "\(500 - SVGScanner.itemLimit) more not listed")
        #expect(result.summary.hasSuffix("and \(SVGScanner.itemLimit - 3) more"))
    }
}
