import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit
@testable import GalleyStore
@testable import GalleyStorePostgres
@testable import GalleyStoreSQLite

/// Every check carries triggering and clean examples; this suite runs them all (the SwiftLint
/// model): a triggering example must report the check (at the JSON path or line the example
/// states, when it states one), a clean one must not. It lives with the store's tests because
/// the complete catalogue includes the store's `import.*` checks.
@Suite struct CheckCatalogTests {
    static let fixtures = TestFiles.fixtures

    init() { ProcessEnvironment.configureForArchives() }

    /// What running an example reports: validate for inputs, and pack, render or import for
    /// the examples of their checks.
    static func findings(_ example: CheckExample) throws -> [Diagnostic] {
        let validator = Validator()
        switch example.input {
        case .fixture(let path):
            return try validator.validate(path: fixtures.appending(path: path).path).flatMap(\.diagnostics)
        case .pack(let source, let zipName, let maxEntries):
            let out = try scratch()
            defer { try? FileManager.default.removeItem(at: out) }
            var options = PackOptions(source: fixtures.appending(path: source), output: zipName.map { out.appending(path: $0) } ?? out)
            if let maxEntries { options.limits = ZipLimits(maxEntries: maxEntries, maxBytes: ZipLimits.classic.maxBytes) }
            do {
                return try Packer().pack(options).warnings
            } catch let error as DiagnosticsError {
                return error.diagnostics
            }
        case .validateSource(let source, let maxEntries):
            return try Packer().check(fixtures.appending(path: source),
                                      limits: ZipLimits(maxEntries: maxEntries, maxBytes: ZipLimits.classic.maxBytes))
        case .render:
            let folder = try scratch()
            defer { try? FileManager.default.removeItem(at: folder) }
            let manifest = folder.appending(path: "latest.json")
            try Data(try #require(example.manifestText).utf8).write(to: manifest)
            return try Renderer().renderArticle(from: manifest, id: "5f0000000000000000000020", outputDirectory: folder).warnings
        case .importInOrder(let first, let second):
            let folder = try scratch()
            defer { try? FileManager.default.removeItem(at: folder) }
            let store = try SQLiteStore(at: folder.appending(path: "store"))
            var found: [Diagnostic] = []
            for zip in [first, second] {
                do {
                    found += try store.importZip(fixtures.appending(path: zip).path, force: false).warnings
                } catch let error as DiagnosticsError {
                    found += error.diagnostics
                }
            }
            return found
        case .manifest, .issue, .article, .asset, .body:
            return validator.validateManifestText(try #require(example.manifestText))
        }
    }

    static func scratch() throws -> URL {
        let url = Scratch.path("galley-catalogue")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func idsAreUniqueAndEveryCheckHasExamples() {
        let ids = CheckCatalog.complete.map(\.id)
        #expect(Set(ids).count == ids.count)
        for check in CheckCatalog.complete {
            #expect(!check.triggering.isEmpty, "\(check.id) has no triggering example")
            #expect(!check.clean.isEmpty, "\(check.id) has no clean example")
            #expect(!check.explanation.isEmpty && !check.summary.isEmpty)
        }
    }

    @Test(arguments: CheckCatalog.complete.map(\.id.rawValue))
    func triggeringExamplesReportTheCheck(id: String) throws {
        let check = try #require(CheckCatalog.complete.first { $0.id.rawValue == id })
        for example in check.triggering {
            let found = try Self.findings(example).filter { $0.id == check.id }
            #expect(!found.isEmpty, "\(id) not reported for \(example.description)")
            if let jsonPath = example.jsonPath {
                #expect(found.contains { $0.location?.jsonPath == jsonPath },
                        "\(id) for \(example.description) is not at \(jsonPath): \(found.map { $0.location?.jsonPath ?? "-" })")
            }
            if let line = example.line {
                #expect(found.contains { $0.location?.line == line },
                        "\(id) for \(example.description) is not on line \(line): \(found.map { $0.location?.line ?? 0 })")
            }
        }
    }

    @Test(arguments: CheckCatalog.complete.map(\.id.rawValue))
    func cleanExamplesDoNotReportTheCheck(id: String) throws {
        let check = try #require(CheckCatalog.complete.first { $0.id.rawValue == id })
        for example in check.clean {
            let found = try Self.findings(example)
            #expect(!found.contains { $0.id == check.id }, "\(id) reported for clean \(example.description)")
        }
    }

    @Test func theTemplateIsCleanOfErrorsAndWarnings() {
        let text = JSONWriter().encode(CheckExample.template)
        #expect(Validator().validateManifestText(text).isEmpty)
    }

    @Test func docsChecksMarkdownIsGeneratedFromTheCatalogue() throws {
        let docs = Self.fixtures.deletingLastPathComponent().deletingLastPathComponent().appending(path: "docs/checks.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        #expect(text == CheckCatalog.markdown(CheckCatalog.complete),
                "regenerate with: galley validate --list-checks --markdown > docs/checks.md")
    }

    /// No string literal names a check outside its declaration (`Check("zip.crc", ...)`): every
    /// emitter names the declared value, so an id cannot be misspelt or missing from the catalogue.
    @Test func checkIDsAppearOnlyInTheirDeclarations() throws {
        let sources = Self.fixtures.deletingLastPathComponent().deletingLastPathComponent().appending(path: "Sources")
        let pattern = try Regex(#""(zip|manifest|ref|body|media|source|pack|render|import)\.[a-z0-9-]+""#)
        var offenders: [String] = []
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() where line.contains(pattern) {
                let opening = number > 0 ? lines[number - 1] : ""
                let isDeclaration = line.contains("= Check(") || line.contains("= Check.source(")
                    || opening.hasSuffix("= Check(")
                if !isDeclaration { offenders.append("\(url.lastPathComponent):\(number + 1): \(line)") }
            }
        }
        #expect(offenders.isEmpty, "check ids outside declarations:\n\(offenders.joined(separator: "\n"))")
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
        #expect(found.map(\.id) == [Check.manifestDateEmpty.id])
        #expect(found.first?.severity == .error)
        #expect(throws: GalleyError.self) { try configuration.set("manifest.no-such-check", "off", source: "test") }
        #expect(throws: GalleyError.self) { try configuration.set("manifest.date-empty", "loud", source: "test") }
    }
}
