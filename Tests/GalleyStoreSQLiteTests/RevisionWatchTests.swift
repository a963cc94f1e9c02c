import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit
@testable import GalleyStore
@testable import GalleyStoreSQLite

/// `revision()` skips the database read while the store's files are unchanged, and never
/// answers an old revision after a write, by this connection or another process's.
@Suite struct RevisionWatchTests {
    static let fixtures = TestFiles.fixtures

    init() { ProcessEnvironment.configureForArchives() }

    /// A database file and its log, last changed `age` seconds ago.
    func files(age: TimeInterval) throws -> String {
        let folder = Scratch.path("galley-revision")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let database = folder.appending(path: "store.sqlite").path
        for path in [database, database + "-wal"] {
            try writeFile(path, "pages")
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-age)], ofItemAtPath: path)
        }
        return database
    }

    final class Reads: @unchecked Sendable {
        var count = 0
        func read() -> Int64 { count += 1; return Int64(count) }
    }

    @Test func quietFilesAreReadOnceAndAnyChangeReadsAgain() throws {
        let database = try files(age: 10)
        let watch = RevisionWatch(database: database)
        let reads = Reads()
        #expect(watch.revision(reads.read) == 1)
        #expect(watch.revision(reads.read) == 1)
        #expect(reads.count == 1, "unchanged quiet files: no second read")
        // A commit appends to the log.
        let log = try #require(FileHandle(forWritingAtPath: database + "-wal"))
        try log.seekToEnd()
        try log.write(contentsOf: Data("frame".utf8))
        try log.close()
        #expect(watch.revision(reads.read) == 2)
        // The log, now changed within `quiet`, is read on every call until it is quiet again.
        #expect(watch.revision(reads.read) == 3)
        // A log rewritten from its start: same size, and its time set back to an old one, but
        // another file (inode): read again.
        let older = try files(age: 10)
        try FileManager.default.removeItem(atPath: database + "-wal")
        try FileManager.default.copyItem(atPath: older + "-wal", toPath: database + "-wal")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-20)], ofItemAtPath: database + "-wal")
        #expect(watch.revision(reads.read) == 4)
        #expect(watch.revision(reads.read) == 4)
        // The log gone (the last connection closed and checkpointed): read again.
        try FileManager.default.removeItem(atPath: database + "-wal")
        #expect(watch.revision(reads.read) == 5)
    }

    /// `recentRevision`'s window: a kept revision confirmed less than the window ago is answered
    /// without looking at the files; once the window has passed, a change is seen.
    @Test func aKeptRevisionConfirmedWithinTheWindowIsAnsweredWithoutStamps() throws {
        let database = try files(age: 10)
        let watch = RevisionWatch(database: database)
        let reads = Reads()
        // Longer than the machine has been up: "forgotten" must not read as "confirmed at boot"
        // (it once did, and failed only on machines up for less than the window).
        let forever: UInt64 = .max / 2
        #expect(watch.revision(within: forever, reads.read) == 1)
        let log = try #require(FileHandle(forWritingAtPath: database + "-wal"))
        try log.seekToEnd()
        try log.write(contentsOf: Data("frame".utf8))
        try log.close()
        #expect(watch.revision(within: forever, reads.read) == 1, "inside the window: the kept revision")
        #expect(reads.count == 1)
        // A write by this process forgets the window: its own change shows at once.
        watch.forget()
        #expect(watch.revision(within: forever, reads.read) == 2)
        #expect(watch.revision(within: 1, reads.read) == 3, "past the window, files changed just now: read")
    }

    @Test func filesChangedJustNowAreReadEveryTime() throws {
        let database = try files(age: 0)
        let watch = RevisionWatch(database: database, quiet: 60_000_000_000)
        let reads = Reads()
        for expected in 1...3 { #expect(watch.revision(reads.read) == Int64(expected)) }
    }

    /// The real case: `serve` reads through its own connection while another (an import by
    /// `galley import`) writes, after the files were quiet long enough for a reading to be kept.
    @Test func aWriteThroughAnotherConnectionShowsAtOnce() throws {
        let root = Scratch.path("galley-revision-store")
        let writer = try SQLiteStore(at: root, access: .create)
        _ = try writer.importZip(Self.fixtures.appending(path: "zips/example-valid.zip").path, force: false)
        let reader = try SQLiteStore(at: root, access: .read)
        let before = try reader.revision()
        Thread.sleep(forTimeInterval: 1.2)
        #expect(try reader.revision() == before)
        #expect(try reader.revision() == before, "kept")
        _ = try writer.delete("example-valid")
        #expect(try reader.revision() > before)
        #expect(try reader.issues().isEmpty)
    }
}
