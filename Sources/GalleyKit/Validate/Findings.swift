import GalleyCore
import GalleyFormats
/// Collects the findings of one input, taking each check's severity from the catalogue and
/// the configuration (which may change it or switch the check off).
public struct Findings: Sendable {
    public private(set) var items: [Diagnostic] = []
    package let configuration: ValidationConfiguration

    public init(configuration: ValidationConfiguration = ValidationConfiguration()) {
        self.configuration = configuration
    }

    public mutating func add(_ check: Check, _ message: String, at location: SourceLocation?, hint: String? = nil) {
        guard let severity = configuration.severity(of: check) else { return }
        items.append(Diagnostic(check, severity: severity, message, at: location, hint: hint))
    }

    /// Adds findings made elsewhere (by the source loader and packer), applying the configuration.
    public mutating func adopt(_ diagnostics: [Diagnostic]) {
        for diagnostic in diagnostics {
            var copy = diagnostic
            if let check = CheckCatalog.check(diagnostic.id) {
                guard let severity = configuration.severity(of: check) else { continue }
                copy.severity = severity
            }
            items.append(copy)
        }
    }

    /// Adds the findings of another part of the same check, in their order.
    package mutating func append(_ other: Findings) {
        items.append(contentsOf: other.items)
    }

    /// Puts groups of findings made elsewhere at the positions given (each an `items.count`
    /// taken when the group's place came; ascending), ahead of what was added since.
    package mutating func insert(_ groups: [(position: Int, items: [Diagnostic])]) {
        guard !groups.isEmpty else { return }
        var merged: [Diagnostic] = []
        merged.reserveCapacity(items.count + groups.reduce(0) { $0 + $1.items.count })
        var next = 0
        for group in groups {
            merged.append(contentsOf: items[next..<group.position])
            merged.append(contentsOf: group.items)
            next = group.position
        }
        merged.append(contentsOf: items[next...])
        items = merged
    }

    public var hasErrors: Bool { items.contains { $0.severity == .error } }
    public func count(_ severity: Severity) -> Int { items.filter { $0.severity == severity }.count }
}

/// What a team has decided about checks: ignored ids and changed severities
/// (from `--ignore` and `.galley.yml`).
public struct ValidationConfiguration: Sendable {
    public enum Setting: String, Sendable {
        case off, info, warning, error
    }

    public var settings: [CheckID: Setting] = [:]
    /// Container limits, when the configuration changes them.
    public var limits = ContainerLimits()
    /// Where the settings came from, for messages.
    public var sources: [String] = []

    public init() {}

    public func severity(of check: Check) -> Severity? {
        switch settings[check.id] {
        case .off?: nil
        case .info?: .info
        case .warning?: .warning
        case .error?: .error
        case nil: check.severity
        }
    }
}
