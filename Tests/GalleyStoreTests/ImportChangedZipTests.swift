import Foundation
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit
@testable import GalleyStore
@testable import GalleyStorePostgres
@testable import GalleyStoreSQLite
import GalleyTestSupport

/// The checks, the extraction and the kept zip each open the zip by its path: a zip written to,
/// or another file put in its place, while it is imported must not leave the store holding files
/// of one zip and a package of another. Either way of importing refuses it, leaving the store's
/// files as they were and nothing in staging.
struct ImportChangedZipTests {
    init() { ProcessEnvironment.configureForArchives() }

    static let fixtures = StoreConformanceTests.fixtures.appending(path: "zips")
    static let example = TestFiles.example

    enum Change: String, CaseIterable, CustomTestStringConvertible {
        /// Another valid zip written beside it and renamed over it, as packers write.
        case replaced
        /// The same bytes written again in place.
        case rewritten
        /// Removed: the pass cannot open it (removed while the pass reads it, the end's check
        /// finds no file where the directory's was).
        case removed
        var testDescription: String { rawValue }
    }

    static func change(_ path: String, _ change: Change) throws {
        // Past the file system's timestamp granularity, so the change time surely moves.
        usleep(20_000)
        switch change {
        case .replaced:
            // Even the same bytes: which file is read is what counts (another one of the same
            // layout and other content would pass the checks the first one passed).
            let other = path + ".new"
            try FileManager.default.copyItem(atPath: path, toPath: other)
            guard rename(other, path) == 0 else { throw GalleyError("cannot rename over \(path)") }
        case .rewritten:
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.write(contentsOf: bytes)
            try handle.close()
        case .removed:
            try FileManager.default.removeItem(atPath: path)
        }
    }

    @Test(arguments: Change.allCases, [true, false])
    func aZipChangedAfterItsChecksBeganIsRefused(change: Change, beside: Bool) throws {
        let folder = try Scratch.folder("galley-changed")
        let store = try SQLiteStore(at: folder.appending(path: "store"))
        // The store holds another issue (the example source, packed).
        let packed = try Packer().pack(PackOptions(source: Self.example, output: folder.appending(path: "dist/")))
        _ = try store.importZip(packed.path, force: false)
        let zip = folder.appending(path: "example-valid.zip").path
        try FileManager.default.copyItem(atPath: Self.fixtures.appending(path: "example-valid.zip").path, toPath: zip)
        let before = try StoreSnapshot.of(folder.appending(path: "store").path)

        // The directory is read, then the zip changes; latest.json is checked beside the pass
        // or before it.
        let job = try ImportJob.open(zip)
        try Self.change(zip, change)
        let outcome = Result { try store.importZip(beside ? job : job.checkingFirst()) }
        guard case .failure(let error) = outcome else {
            Issue.record("imported a zip that changed while it was imported")
            return
        }
        if change == .removed {
            let refusal = try #require(error as? DiagnosticsError, "\(error)")
            #expect(refusal.diagnostics.map(\.id.rawValue) == ["zip.unreadable"])
        } else {
            let failure = try #require(error as? GalleyError, "\(error)")
            #expect(failure.id == .inputUnreadable)
            #expect(failure.message.contains("changed while it was imported"))
        }
        #expect(try StoreSnapshot.of(folder.appending(path: "store").path) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.appending(path: "store/staging").path).isEmpty)

        // Unchanged since (or put back), it imports.
        if change == .removed {
            try FileManager.default.copyItem(atPath: Self.fixtures.appending(path: "example-valid.zip").path, toPath: zip)
        }
        #expect(try store.importZip(zip, force: false).status == .imported)
    }
}
