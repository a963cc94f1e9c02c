import Foundation
import Testing
@testable import GalleyKit

/// Every check carries triggering and clean examples; this suite runs them all (the SwiftLint
/// model): a triggering example must report the check, a clean one must not.
@Suite struct CheckCatalogTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures")

    static func findings(_ example: CheckExample) throws -> [Diagnostic] {
        let validator = Validator()
        if case .fixture(let path) = example {
            return try validator.validate(path: fixtures.appending(path: path).path).flatMap(\.diagnostics)
        }
        return validator.validateManifestText(try #require(example.manifestText))
    }

    @Test func idsAreUniqueAndEveryCheckHasExamples() {
        let ids = CheckCatalog.all.map(\.id)
        #expect(Set(ids).count == ids.count)
        for check in CheckCatalog.all {
            #expect(!check.triggering.isEmpty, "\(check.id) has no triggering example")
            #expect(!check.clean.isEmpty, "\(check.id) has no clean example")
            #expect(!check.explanation.isEmpty && !check.summary.isEmpty)
        }
    }

    @Test(arguments: CheckCatalog.all.map(\.id))
    func triggeringExamplesReportTheCheck(id: String) throws {
        let check = try #require(CheckCatalog.check(id))
        for example in check.triggering {
            let found = try Self.findings(example).map(\.id)
            #expect(found.contains(id), "\(id) not reported for \(example.description); got \(found)")
        }
    }

    @Test(arguments: CheckCatalog.all.map(\.id))
    func cleanExamplesDoNotReportTheCheck(id: String) throws {
        let check = try #require(CheckCatalog.check(id))
        for example in check.clean {
            let found = try Self.findings(example)
            #expect(!found.map(\.id).contains(id), "\(id) reported for clean \(example.description)")
        }
    }

    @Test func theTemplateIsCleanOfErrorsAndWarnings() {
        let text = JSONWriter().encode(CheckExample.template)
        #expect(Validator().validateManifestText(text).isEmpty)
    }

    @Test func docsChecksMarkdownIsGeneratedFromTheCatalogue() throws {
        let docs = Self.fixtures.deletingLastPathComponent().deletingLastPathComponent().appending(path: "docs/checks.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        #expect(text == CheckCatalog.markdown(), "regenerate with: galley validate --list-checks --markdown > docs/checks.md")
    }

    @Test func aConfigurationSwitchesChecksOffAndChangesSeverities() throws {
        var configuration = ValidationConfiguration()
        try configuration.set("manifest.date-empty", "error", source: "test")
        try configuration.set("manifest.unknown-key", "off", source: "test")
        var options = ValidationOptions()
        options.configuration = configuration
        let text = try #require(CheckExample.article("date_last_updated", "\"\"").manifestText)
            .replacingOccurrences(of: "\"title\": \"Title\"", with: "\"title\": \"Title\", \"extra\": 1")
        let found = Validator(options: options).validateManifestText(text)
        #expect(found.map(\.id) == ["manifest.date-empty"])
        #expect(found.first?.severity == .error)
        #expect(throws: GalleyError.self) { try configuration.set("manifest.no-such-check", "off", source: "test") }
        #expect(throws: GalleyError.self) { try configuration.set("manifest.date-empty", "loud", source: "test") }
    }
}
