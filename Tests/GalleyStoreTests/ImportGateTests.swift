import Foundation
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit
@testable import GalleyStore

/// What passed the gate: the small facts kept, the content pass's index handed over once.
struct ImportGateTests {
    init() { ProcessEnvironment.configureForArchives() }

    @Test func theCheckIsHandedOverOnceAndReadAgainAfter() throws {
        let zip = StoreConformanceTests.fixtures.appending(path: "zips/example-valid.zip").path
        let passed = try ImportGate.check(zip)
        #expect(passed.issue.appleID == "example-valid")
        #expect(passed.fileCount > 0 && passed.declaredBytes > 0 && passed.contentDigest.count == 64)
        let first = try passed.takeCheck()
        // A second pass over the same Passed reads the zip's head again: the same check.
        let second = try passed.takeCheck()
        #expect(first.issue.appleID == second.issue.appleID)
        #expect(first.directory.entries.count == second.directory.entries.count)
        #expect(try first.checkContent(sink: nil).filter { $0.severity == .error }.isEmpty)
        #expect(try second.checkContent(sink: nil).filter { $0.severity == .error }.isEmpty)
    }

    @Test func aZipThatIsNoZipNeverPasses() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "gate-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fake = folder.appending(path: "issue.zip")
        try Data("not a zip at all".utf8).write(to: fake)
        #expect(throws: (any Error).self) { try ImportGate.check(fake.path) }
    }
}
