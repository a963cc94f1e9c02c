@testable import GalleyFormats

/// The process-wide set-up the CLI makes first thing (docs/architecture.md): touched by every
/// suite that reaches libarchive. A static let runs once, whichever suite gets there first.
enum TestSetup {
    static let archives: Void = ProcessEnvironment.configureForArchives()
}
