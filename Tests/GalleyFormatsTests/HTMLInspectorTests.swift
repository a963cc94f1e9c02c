import Testing
@testable import GalleyFormats

/// `HTMLInspector` reads start tags from libxml2's SAX callbacks, with no document tree. When
/// it changed to that (2026-11-27), it gave what the tree walk gave on 379 bodies of the
/// fixtures and the benchmark and on 200,000 random mixes of broken markup; these are the
/// cases where a SAX reader could have differed.
@Suite struct HTMLInspectorTests {
    @Test func aStartTagOverSeveralLinesHasTheLineItEndsOn() {
        let inspection = HTMLInspector.inspect("<p>a</p>\n<p\nclass=\"a\"\nonclick=\"y\">b</p>\n<script src=\"x.js\"></script>")
        #expect(inspection.eventHandlers == [.init(line: 4, what: "p@onclick", value: "y")])
        #expect(inspection.scripts == [.init(line: 5, what: "script", value: "x.js")])
        #expect(inspection.problems.isEmpty)
    }

    @Test func valuelessAttributesAreHandlersButNeverURLs() {
        let inspection = HTMLInspector.inspect("<input disabled onfocus><img src><option selected onclick><a href>x</a>")
        #expect(inspection.eventHandlers == [
            .init(line: 1, what: "input@onfocus", value: ""), .init(line: 1, what: "option@onclick", value: ""),
        ])
        #expect(inspection.remoteResources.isEmpty && inspection.javascriptURLs.isEmpty)
    }

    @Test func elementsTheParserImpliesAroundTextStillCount() {
        let inspection = HTMLInspector.inspect("text <script>x</script>\n<img src=\"https://cdn.example/a.png\">")
        #expect(inspection.scripts == [.init(line: 1, what: "script", value: "")])
        #expect(inspection.remoteResources == [.init(line: 2, what: "img@src", value: "https://cdn.example/a.png")])
    }

    /// The tree kept a line in 16 bits: a script past line 65,535 was said to be on 65,535,
    /// while libxml2's own complaint on the same line gave the right one.
    @Test func linesPast65535AreTheRealOnes() {
        let inspection = HTMLInspector.inspect(String(repeating: "\n", count: 70_000) + "<script></script><b>x</p>")
        #expect(inspection.scripts == [.init(line: 70_001, what: "script", value: "")])
        #expect(inspection.problems == [.init(line: 70_001, column: 26, message: "Unexpected end tag : p")])
    }

    @Test func noBytesAreNoComplaint() {
        let inspection = HTMLInspector.inspect("")
        #expect(inspection.problems.isEmpty && inspection.scripts.isEmpty)
    }

    @Test func uppercaseNamesAndSchemesAreFound() {
        let inspection = HTMLInspector.inspect("<A HREF=' JavaScript:go()'>x</A><SCRIPT SRC='a.js'></SCRIPT><LINK REL=stylesheet HREF=//c.example/s.css>")
        #expect(inspection.javascriptURLs == [.init(line: 1, what: "a@href", value: " JavaScript:go()")])
        #expect(inspection.scripts == [.init(line: 1, what: "script", value: "a.js")])
        #expect(inspection.remoteResources == [.init(line: 1, what: "link@href", value: "//c.example/s.css")])
    }
}
