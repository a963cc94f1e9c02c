/// A check's stable id (`zip.crc`, `source.field-missing`). CI configurations and `.galley.yml`
/// files name checks by it, so it never changes once released.
///
/// Ids are declared once, as `Check` values beside the code that emits them
/// (`extension Check { static let zipCrc = Check("zip.crc", ...) }`); emitters name the check
/// (`findings.add(.zipCrc, ...)`, `Diagnostic(.sourceFieldMissing, ...)`), never the string.
///
/// Encodes as its plain string (the standard library's Codable for string-backed RawRepresentable).
public struct CheckID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    /// An id as a user typed it (`--ignore`, `.galley.yml`); whether it names a check is the
    /// catalogue's to say.
    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }
}

/// One check of `galley validate` (or finding of `galley pack`, `render`, `import`): a stable id,
/// a default severity, what it means, and examples that trigger it and that do not. The test
/// suite runs every example; `docs/checks.md` is generated from the same values.
public struct Check: Sendable {
    public enum Group: String, Sendable, CaseIterable {
        case container, manifest, references, body, media, source, pack, render, `import`
    }

    public let id: CheckID
    public let group: Group
    /// The severity when no configuration changes it: stated here and nowhere else.
    public let severity: Severity
    /// One line: what is wrong.
    public let summary: String
    /// Why it matters, in Dumpling's terms where it can crash an app.
    public let explanation: String
    public let triggering: [CheckExample]
    public let clean: [CheckExample]

    /// Declares a check. The id's text appears here only.
    package init(
        _ id: String, _ group: Group, _ severity: Severity, _ summary: String, explanation: String,
        triggering: [CheckExample], clean: [CheckExample]
    ) {
        self.id = CheckID(rawValue: id)
        self.group = group
        self.severity = severity
        self.summary = summary
        self.explanation = explanation
        self.triggering = triggering
        self.clean = clean
    }
}

/// An input for a check's example, and optionally where the finding must point (SwiftLint's
/// `↓`): a JSON path or a line. Manifest examples patch a valid template
/// (`CheckExample.template`) so each shows only what it is about.
public struct CheckExample: Sendable, Hashable {
    public enum Input: Sendable, Hashable {
        /// A whole `latest.json` text.
        case manifest(String)
        /// The template with an issue key set to the given JSON text, or removed when `nil`.
        case issue(String, String?)
        /// The template with a key of its first article set (JSON text) or removed.
        case article(String, String?)
        /// The template with a key of the first article's first image set (JSON text) or removed.
        case asset(String, String?)
        /// The template with the first article's body set to this HTML.
        case body(String)
        /// A file or folder under `Tests/Fixtures`.
        case fixture(String)
        /// `galley pack` of a source fixture to a zip of this file name; with `maxEntries`, under
        /// that entry limit instead of Dumpling's 65,535 (so a test need not write 65,536 files).
        case pack(String, zipName: String?, maxEntries: Int?)
        /// `galley validate` of a source fixture under this entry limit instead of Dumpling's
        /// 65,535.
        case validateSource(String, maxEntries: Int)
        /// `galley render` of the template with the first article's body set to this HTML.
        case render(String)
        /// `galley import` of the first zip fixture, then of the second, into a new store.
        case importInOrder(String, String)
    }

    public var input: Input
    /// The JSON path the finding must carry (`articles[0].title`), when the example says.
    public var jsonPath: String?
    /// The line the finding must carry, when the example says.
    public var line: Int?

    public init(_ input: Input, jsonPath: String? = nil, line: Int? = nil) {
        self.input = input
        self.jsonPath = jsonPath
        self.line = line
    }

    public static func manifest(_ text: String) -> CheckExample { CheckExample(.manifest(text)) }
    public static func issue(_ key: String, _ value: String?) -> CheckExample { CheckExample(.issue(key, value)) }
    public static func article(_ key: String, _ value: String?) -> CheckExample { CheckExample(.article(key, value)) }
    public static func asset(_ key: String, _ value: String?) -> CheckExample { CheckExample(.asset(key, value)) }
    public static func body(_ html: String) -> CheckExample { CheckExample(.body(html)) }
    public static func fixture(_ path: String) -> CheckExample { CheckExample(.fixture(path)) }
    public static func pack(_ source: String, zipName: String? = nil, maxEntries: Int? = nil) -> CheckExample {
        CheckExample(.pack(source, zipName: zipName, maxEntries: maxEntries))
    }
    public static func validateSource(_ source: String, maxEntries: Int) -> CheckExample {
        CheckExample(.validateSource(source, maxEntries: maxEntries))
    }
    public static func render(_ body: String) -> CheckExample { CheckExample(.render(body)) }
    public static func importInOrder(_ first: String, _ second: String) -> CheckExample {
        CheckExample(.importInOrder(first, second))
    }

    /// The same example, stating the JSON path its finding must point at.
    public func at(_ jsonPath: String) -> CheckExample {
        var copy = self
        copy.jsonPath = jsonPath
        return copy
    }

    /// The same example, stating the line its finding must point at.
    public func at(line: Int) -> CheckExample {
        var copy = self
        copy.line = line
        return copy
    }

    /// A valid issue zip, built by `Tests/Fixtures/make_fixtures.py`.
    public static let validZip = CheckExample.fixture("zips/example-valid.zip")
    /// A valid issue source folder.
    public static let validSource = CheckExample.fixture("sources/minimal-valid")

    /// How the example reads in docs/checks.md.
    public var description: String {
        switch input {
        case .manifest(let text): "latest.json: `\(text)`"
        case .issue(let key, let value): value.map { "issue `\"\(key)\": \($0)`" } ?? "issue without `\(key)`"
        case .article(let key, let value): value.map { "article `\"\(key)\": \($0)`" } ?? "article without `\(key)`"
        case .asset(let key, let value): value.map { "asset `\"\(key)\": \($0)`" } ?? "asset without `\(key)`"
        case .body(let html): "body `\(html.replacingOccurrences(of: "\n", with: "\\n"))`"
        case .fixture(let path): "fixture `Tests/Fixtures/\(path)`"
        case .pack(let source, let zipName, let maxEntries):
            "`galley pack Tests/Fixtures/\(source)`" + (zipName.map { " to `\($0)`" } ?? "")
                + (maxEntries.map { " under an entry limit of \($0)" } ?? "")
        case .validateSource(let source, let maxEntries):
            "`galley validate Tests/Fixtures/\(source)` under an entry limit of \(maxEntries)"
        case .render(let html): "`galley render` of the template whose body is `\(html.replacingOccurrences(of: "\n", with: "\\n"))`"
        case .importInOrder(let first, let second):
            "`galley import` of `Tests/Fixtures/\(first)`, then of `Tests/Fixtures/\(second)`"
        }
    }
}
