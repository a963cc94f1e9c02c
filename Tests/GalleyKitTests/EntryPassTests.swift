import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyFormats
@testable import GalleyKit

/// The content pass hands a sink (an import's extraction) only the files inside the issue's
/// folder, by their names in it. The container checks refuse a zip with a second top folder
/// before any pass; this is the second line, for a pass that runs anyway.
@Suite struct EntryPassTests {
    final class Recorder: ZipEntrySink {
        var names: [String] = []
        func begin(_ name: Substring, size: Int64) { names.append(String(name)) }
        func write(_ chunk: ArraySlice<UInt8>) {}
        func finish() {}
    }

    @Test func onlyFilesInsideTheIssueFolderReachTheSink() throws {
        let members = [
            HandMadeZip.stored("issue/latest.json", "{}"),
            HandMadeZip.deflated("issue/a.txt", "inside"),
            HandMadeZip.stored("other/b.txt", "outside"),
        ]
        let path = Scratch.path("galley-entrypass", suffix: ".zip").path
        try Data(HandMadeZip.zip(members)).write(to: URL(fileURLWithPath: path))
        let directory = try ZipDirectory.read(path: path, maxEntries: 10)
        let pass = EntryPass(path: path, directory: directory, top: "issue", manifestName: "issue/latest.json",
                             mode: .contentOnly, checker: Validator())
        var contents = ZipContents(directory, top: "issue")
        var findings = Findings(configuration: ValidationConfiguration())
        let recorder = Recorder()
        _ = try pass.run(sink: recorder, contents: &contents, into: &findings)
        #expect(recorder.names == ["latest.json", "a.txt"])
        #expect(findings.items.isEmpty, "the entry outside is still read and its CRC checked: \(findings.items.map(\.message))")
    }

    /// Damage names the file it is in, not only the zip.
    @Test func damageIsLocatedAtItsEntry() throws {
        var bad = HandMadeZip.deflated("issue/a.txt", "inside")
        bad.crc ^= 1
        let path = Scratch.path("galley-entrypass", suffix: ".zip").path
        try Data(HandMadeZip.zip([HandMadeZip.stored("issue/latest.json", "{}"), bad])).write(to: URL(fileURLWithPath: path))
        let directory = try ZipDirectory.read(path: path, maxEntries: 10)
        let pass = EntryPass(path: path, directory: directory, top: "issue", manifestName: "issue/latest.json",
                             mode: .contentOnly, checker: Validator())
        var contents = ZipContents(directory, top: "issue")
        var findings = Findings(configuration: ValidationConfiguration())
        _ = try pass.run(sink: nil, contents: &contents, into: &findings)
        #expect(findings.items.map(\.id.rawValue) == ["zip.crc"])
        #expect(findings.items.first?.location?.path == "\(path)!issue/a.txt")
    }
}
