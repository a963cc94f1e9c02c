import GRDB

/// A query's WHERE clauses and their arguments, built filter by filter, so that each listing
/// states only its own filters.
struct SQLFilter {
    private(set) var clauses: [String] = []
    private(set) var arguments: StatementArguments = []

    /// Adds `clause` with the values of its `?` placeholders.
    mutating func add(_ clause: String, _ values: [any DatabaseValueConvertible] = []) {
        clauses.append(clause)
        _ = arguments.append(contentsOf: StatementArguments(values))
    }

    /// ` WHERE a AND b`, or nothing when no filter applies.
    var whereSQL: String { clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ") }
}
