/// One check of `galley validate` (or finding of `galley pack`): a stable id, a default
/// severity, what it means, and examples that trigger it and that do not. The test suite runs
/// every example; `docs/checks.md` is generated from the same values.
public struct Check: Sendable {
    public enum Group: String, Sendable, CaseIterable {
        case container, manifest, references, body, media, source
    }

    public var id: String
    public var group: Group
    public var severity: Severity
    /// One line: what is wrong.
    public var summary: String
    /// Why it matters, in Dumpling's terms where it can crash an app.
    public var explanation: String
    public var triggering: [CheckExample]
    public var clean: [CheckExample]

    public init(
        _ id: String, _ group: Group, _ severity: Severity, _ summary: String, explanation: String,
        triggering: [CheckExample], clean: [CheckExample]
    ) {
        self.id = id
        self.group = group
        self.severity = severity
        self.summary = summary
        self.explanation = explanation
        self.triggering = triggering
        self.clean = clean
    }
}

/// An input for a check's example. Manifest examples patch a valid template
/// (`CheckExample.template`) so each shows only what it is about.
public enum CheckExample: Sendable, Hashable {
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

    /// How the example reads in docs/checks.md.
    public var description: String {
        switch self {
        case .manifest(let text): "latest.json: `\(text)`"
        case .issue(let key, let value): value.map { "issue `\"\(key)\": \($0)`" } ?? "issue without `\(key)`"
        case .article(let key, let value): value.map { "article `\"\(key)\": \($0)`" } ?? "article without `\(key)`"
        case .asset(let key, let value): value.map { "asset `\"\(key)\": \($0)`" } ?? "asset without `\(key)`"
        case .body(let html): "body `\(html.replacingOccurrences(of: "\n", with: "\\n"))`"
        case .fixture(let path): "fixture `Tests/Fixtures/\(path)`"
        }
    }
}
