import Testing
@testable import GalleyFormats

/// Where a YAML error that follows a forgotten closing quote is reported: at the quote.
@Suite struct UnclosedQuoteTests {
    @Test(arguments: [
        // (text, the error's line, the quote found: line and column, or nil)
        ("title: \"Winter\nkey: \"x\"\n", 2, (1, 8)),
        ("a: 1\n  - 'it''s open\nb: 'c'\n", 3, (2, 5)),
        ("title: \"closed \\\" inside\"\nb: \"open\nc: \"d\"\n", 3, (2, 4)),
        ("title: 'it''s closed'\n# a: \"comment\nb: [x\n", 3, nil),
        ("title: plain \"quote\" later\nb: [x\n", 2, nil),
        ("title: \"open on the error line\n", 1, nil),
    ] as [(String, Int, (Int, Int)?)])
    func theQuoteIsFoundOnlyBeforeTheError(_ text: String, _ errorLine: Int, _ expected: (Int, Int)?) {
        let found = YAMLFields.unclosedQuote(in: text, before: errorLine)
        #expect(found?.line == expected?.0 && found?.column == expected?.1, "\(text)")
    }
}
