import Testing
@testable import GalleyCore

/// The log's error count, kept as findings come (pack asks for it after every article).
struct DiagnosticLogTests {
    @Test func theErrorCountFollowsWhatIsAddedOneByOneOrInBulk() {
        let error = Diagnostic(.manifestIdDuplicate, "the id `a` is used twice")
        let warning = Diagnostic(.mediaSVGMalformed, "not well-formed")
        var log = DiagnosticLog()
        #expect(log.errorCount == 0 && !log.hasErrors)
        log.add(warning)
        #expect(log.errorCount == 0 && !log.hasErrors)
        log.add(error)
        #expect(log.errorCount == 1 && log.hasErrors)
        log.add(contentsOf: [warning, error, error, warning])
        #expect(log.errorCount == 3)
        #expect(log.errorCount == log.errors.count)
        #expect(log.warnings.count == 3)
    }

    @Test func takingTheFindingsLeavesTheLogEmptyAndHandsOverTheSameList() {
        var log = DiagnosticLog()
        let found = (0..<5).map { Diagnostic(.mediaSVGMalformed, "warning \($0)") } + [Diagnostic(.manifestIdDuplicate, "an error")]
        log.add(contentsOf: found)
        let taken = log.take()
        #expect(taken.map(\.message) == found.map(\.message))
        #expect(log.items.isEmpty && log.errorCount == 0 && !log.hasErrors)
        log.add(found[5])
        #expect(log.errorCount == 1, "the log goes on counting after")
    }

    /// Errors first, each group in the order found; a list already in that order is left as
    /// it is (no sort, no buffer).
    @Test func errorsGoFirstAndEachGroupKeepsItsOrder() {
        func finding(_ severity: Severity, _ n: Int) -> Diagnostic {
            var d = Diagnostic(.mediaSVGMalformed, "\(severity) \(n)")
            d.severity = severity
            return d
        }
        var mixed = [finding(.warning, 1), finding(.error, 1), finding(.info, 1), finding(.warning, 2), finding(.error, 2)]
        mixed.putErrorsFirst()
        #expect(mixed.map(\.message) == ["error 1", "error 2", "warning 1", "info 1", "warning 2"])
        var sorted = [finding(.error, 1), finding(.warning, 1), finding(.info, 1)]
        sorted.putErrorsFirst()
        #expect(sorted.map(\.message) == ["error 1", "warning 1", "info 1"])
        var none: [Diagnostic] = []
        none.putErrorsFirst()
        #expect(none.isEmpty)
        var random = (0..<500).map { finding([Severity.info, .warning, .error][$0 * 7 % 3], $0) }
        let expected = random.filter { $0.severity == .error } + random.filter { $0.severity != .error }
        random.putErrorsFirst()
        #expect(random.map(\.message) == expected.map(\.message))
    }
}
