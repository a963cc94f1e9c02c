import Testing
@testable import GalleyCore
@testable import GalleyKit

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
}
