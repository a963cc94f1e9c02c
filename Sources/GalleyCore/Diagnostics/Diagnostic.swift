/// How serious a finding is.
public enum Severity: String, Sendable, Codable, Comparable, CaseIterable {
    case info, warning, error

    private var rank: Int {
        switch self {
        case .info: 0
        case .warning: 1
        case .error: 2
        }
    }

    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
}

/// Where a finding is: a file, optionally a line and column in it, and for JSON or YAML
/// documents the path of the value (`articles[2].title`).
public struct SourceLocation: Sendable, Hashable, Codable {
    public var path: String
    @JSONNullable public var line: Int?
    @JSONNullable public var column: Int?
    @JSONNullable public var jsonPath: String?

    private enum CodingKeys: String, CodingKey {
        case path, line, column
        case jsonPath = "json_path"
    }

    public init(path: String, line: Int? = nil, column: Int? = nil, jsonPath: String? = nil) {
        self.path = path
        self.line = line
        self.column = column
        self.jsonPath = jsonPath
    }

    /// `path:line:col` with the parts that are known.
    public var description: String {
        var text = path
        if let line {
            text += ":\(line)"
            if let column { text += ":\(column)" }
        }
        return text
    }
}

/// One finding: a stable id, a severity, what is wrong, where, and how to fix it.
public struct Diagnostic: Sendable, Hashable, Codable {
    public var id: CheckID
    public var severity: Severity
    public var message: String
    @JSONNullable public var location: SourceLocation?
    @JSONNullable public var hint: String?

    /// A finding of `check`, at the check's own severity.
    public init(_ check: Check, _ message: String, at location: SourceLocation? = nil, hint: String? = nil) {
        self.init(check, severity: check.severity, message, at: location, hint: hint)
    }

    /// A finding of `check` at a severity a configuration or policy decided.
    public init(_ check: Check, severity: Severity, _ message: String, at location: SourceLocation? = nil, hint: String? = nil) {
        id = check.id
        self.severity = severity
        self.message = message
        self.location = location
        self.hint = hint
    }

    /// Whether this is a finding of `check`.
    public func `is`(_ check: Check) -> Bool { id == check.id }
}

/// A list of findings collected while working through an input.
public struct DiagnosticLog: Sendable {
    public private(set) var items: [Diagnostic] = []
    /// How many of `items` are errors, kept as they come: a pack asks after every article
    /// whether it added one, and counting them each time was quadratic (a 30,000-article issue
    /// with a warning per picture spent minutes in it).
    public private(set) var errorCount = 0

    public init() {}

    public mutating func add(_ diagnostic: Diagnostic) {
        items.append(diagnostic)
        if diagnostic.severity == .error { errorCount += 1 }
    }

    public mutating func add(contentsOf other: [Diagnostic]) {
        items.append(contentsOf: other)
        errorCount += other.count { $0.severity == .error }
    }

    /// The findings, handed over rather than copied (a source whose 60,000 pictures libvips
    /// cannot read has 60,000 warnings, 7.9 MB of them): the log is empty after.
    public mutating func take() -> [Diagnostic] {
        defer { items = []; errorCount = 0 }
        return items
    }

    public var hasErrors: Bool { errorCount > 0 }
    public var errors: [Diagnostic] { items.filter { $0.severity == .error } }
    public var warnings: [Diagnostic] { items.filter { $0.severity == .warning } }
}

extension Array where Element == Diagnostic {
    /// Errors before everything else, each group in the order found (a stable sort). Sorting
    /// a list that is already in that order, as a list of warnings alone is, is skipped: it
    /// took a buffer of half the list.
    public mutating func putErrorsFirst() {
        guard let firstOther = firstIndex(where: { $0.severity != .error }),
              self[firstOther...].contains(where: { $0.severity == .error }) else { return }
        sort { ($0.severity == .error ? 0 : 1) < ($1.severity == .error ? 0 : 1) }
    }
}

/// The input has problems that stop the operation; every finding is carried.
public struct DiagnosticsError: Error, Sendable {
    public var diagnostics: [Diagnostic]
    public init(_ diagnostics: [Diagnostic]) { self.diagnostics = diagnostics }
}

/// What kind of failure stopped an operation: the stable `id` of `--json`'s
/// `{"error": {...}}` and of docs/json.md. Exit status 2 for all but `problems` (1).
public enum ErrorID: String, Sendable, Codable, CaseIterable {
    /// The command line is wrong: an unknown option, a missing or bad value.
    case usage = "usage"
    /// An input path does not exist, or is not what the command takes.
    case inputNotFound = "input.not-found"
    /// An input exists but is of the wrong kind (a source folder given to import, a FIFO).
    case inputKind = "input.wrong-kind"
    /// An input cannot be read (permissions, damage, not UTF-8).
    case inputUnreadable = "input.unreadable"
    /// The input has problems; each is a finding in the document's `diagnostics` (exit 1).
    case problems = "input.problems"
    /// The output exists and --force was not given.
    case outputExists = "output.exists"
    /// The output cannot be written (permissions, disk full, a file where a folder should be).
    case outputUnwritable = "output.unwritable"
    /// A .galley.yml, template or pattern is wrong.
    case configuration = "config.invalid"
    /// No store at the path (queries never create one).
    case storeMissing = "store.missing"
    /// No issue, article or metadata key with that id (in the store or the input), or more than one.
    case notFound = "id.not-found"
    /// The store cannot be opened, locked or written.
    case storeFailed = "store.failed"
    /// `serve`: the issue's package is kept out of the feed (an older Linechef format).
    case packageWithheld = "package.withheld"
    /// `serve`: a write without the right bearer token (401).
    case authRequired = "auth.required"
    /// `serve`: a write to a server started without a token (403): writes are off.
    case writesOff = "writes.off"
    /// `serve`: an upload over the size limit (413).
    case uploadTooLarge = "upload.too-large"
    /// `serve`: every connection the server takes (`--max-connections`) is open (503, with
    /// `Retry-After`); the connection is closed.
    case serverBusy = "serve.busy"
    /// `sync`: the feed or a package could not be fetched (network, HTTP error) after the retries.
    case feedUnreachable = "feed.unreachable"
    /// `sync`: the feed's answer is not a feed (not JSON, or not the shape of one).
    case feedInvalid = "feed.invalid"
    /// `sync`: the feed's revision is lower than one this store already followed (a rollback):
    /// the error of a signed feed, the warning of an unsigned one.
    case feedRollback = "feed.rollback"
    /// `sync`: a downloaded package's size or SHA-256 is not the feed's.
    case downloadMismatch = "download.mismatch"
    /// `sync --trust-key`: the feed is unsigned, signed by another key, or its signature does not match.
    case feedSignature = "feed.signature"
    /// `sync`: another `galley sync` is writing into the same store; this one did nothing.
    case syncRunning = "sync.running"
    /// The command needs a confirmation it did not get (delete without --yes off a terminal).
    case notConfirmed = "confirmation.missing"
    /// Anything else that stopped the work (a library failure); the message says what.
    case failed = "run.failed"
}

/// The operation could not run at all (unreadable path, output exists, I/O failure).
/// Carries what happened, where, and what to do about it.
public struct GalleyError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var path: String?
    public var hint: String?
    /// What kind of failure, for scripts (`--json`).
    public var id: ErrorID
    /// What a lookup by id did not find (nil: not a lookup). `hint` names the command that
    /// lists what there is; a front end that is not the command line (serve) says it its own way.
    public var missing: Missing?

    /// What a lookup by id did not find, or found more than one of.
    public enum Missing: Sendable, Hashable {
        case issue(String)
        case article(String)
        /// Several issues hold an article with this id (ids are scoped per issue).
        case articleInSeveralIssues(String)
        /// A file of an issue, by name.
        case file(issue: String, name: String)
    }

    public init(_ message: String, id: ErrorID = .failed, path: String? = nil, hint: String? = nil, missing: Missing? = nil) {
        self.message = message
        self.id = id
        self.path = path
        self.hint = hint
        self.missing = missing
    }

    public var description: String {
        (path.map { "\($0): " } ?? "") + message
    }
}
