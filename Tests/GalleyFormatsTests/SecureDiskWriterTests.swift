import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyFormats

/// The import's extraction: libarchive's secure extraction guarantees, by `openat` below open folders.
@Suite struct SecureDiskWriterTests {
    init() { ProcessEnvironment.configureForArchives() }

    /// A fresh folder holding `root/` (where files go) and `outside/` (which must stay empty).
    func folders() throws -> (root: URL, outside: URL) {
        let base = Scratch.path("galley-disk")
        let root = base.appending(path: "root")
        let outside = base.appending(path: "outside")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        return (root, outside)
    }

    func write(_ writer: SecureDiskWriter, _ name: String, _ text: String) throws {
        let bytes = Array(text.utf8)
        try writer.begin(name, size: Int64(bytes.count))
        try writer.write(bytes[...])
        try writer.finish()
    }

    @Test func filesLandUnderTheRootInFoldersWithPlainPermissions() throws {
        let (root, _) = try folders()
        let writer = try SecureDiskWriter(root: root)
        try write(writer, "latest.json", "{}")
        try write(writer, "media/é/photo.jpg", "jpeg")
        #expect(try String(contentsOf: root.appending(path: "media/é/photo.jpg"), encoding: .utf8) == "jpeg")
        let attributes = try FileManager.default.attributesOfItem(atPath: root.appending(path: "latest.json").path)
        #expect((attributes[.posixPermissions] as? Int ?? 0) & 0o022 == 0)
        #expect((attributes[.posixPermissions] as? Int ?? 0) & 0o111 == 0, "never executable")
    }

    @Test func dotDotAbsoluteAndEmptyNamesAreRefused() throws {
        let (root, outside) = try folders()
        let writer = try SecureDiskWriter(root: root)
        for name in ["../outside/x", "a/../../outside/x", "/etc/x", ""] {
            #expect(throws: GalleyError.self, "\(name)") { try writer.begin(name, size: 1) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        try write(writer, "after.txt", "still works")
    }

    @Test func aPathThroughASymbolicLinkIsRefused() throws {
        let (root, outside) = try folders()
        try FileManager.default.createSymbolicLink(at: root.appending(path: "link"), withDestinationURL: outside)
        let writer = try SecureDiskWriter(root: root)
        #expect(throws: GalleyError.self) { try writer.begin("link/x", size: 1) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }

    @Test func aRootReachedThroughALinkIsResolvedFirst() throws {
        let (root, outside) = try folders()
        let alias = outside.deletingLastPathComponent().appending(path: "alias")
        try FileManager.default.createSymbolicLink(at: alias, withDestinationURL: root)
        let writer = try SecureDiskWriter(root: alias)
        try write(writer, "a/b.txt", "ok")
        #expect(FileManager.default.fileExists(atPath: root.appending(path: "a/b.txt").path))
    }

    @Test func aNameWrittenTwiceIsRefusedAndTheFirstFileKept() throws {
        let (root, _) = try folders()
        let writer = try SecureDiskWriter(root: root)
        try write(writer, "photo.jpg", "first")
        #expect(throws: GalleyError.self) { try write(writer, "photo.jpg", "second") }
        #expect(try String(contentsOf: root.appending(path: "photo.jpg"), encoding: .utf8) == "first")
    }

    @Test func moreBytesThanDeclaredAreAnError() throws {
        let (root, _) = try folders()
        let writer = try SecureDiskWriter(root: root)
        try writer.begin("short.txt", size: 2)
        #expect(throws: GalleyError.self) { try writer.write(Array("too long".utf8)[...]) }
    }

    @Test func aLinkAsTheFileItselfAndAFileOnTheWayAreRefused() throws {
        let (root, outside) = try folders()
        try writeFile(outside.appending(path: "target").path, "kept")
        try FileManager.default.createSymbolicLink(at: root.appending(path: "photo.jpg"), withDestinationURL: outside.appending(path: "target"))
        let writer = try SecureDiskWriter(root: root)
        #expect(throws: GalleyError.self) { try writer.begin("photo.jpg", size: 1) }
        #expect(try String(contentsOf: outside.appending(path: "target"), encoding: .utf8) == "kept")
        try write(writer, "plain", "a file")
        #expect(throws: GalleyError.self) { try writer.begin("plain/inside.txt", size: 1) }
        #expect(throws: GalleyError.self) { try writer.begin("a/./b", size: 1) }
        #expect(throws: GalleyError.self) { try writer.begin("a//b", size: 1) }
    }

    /// More folders than stay open at once: each file still lands in its own.
    @Test func moreFoldersThanStayOpenAllReceiveTheirFiles() throws {
        let (root, _) = try folders()
        let writer = try SecureDiskWriter(root: root)
        let count = SecureDiskWriter.openFolderLimit * 2 + 5
        for index in 0..<count { try write(writer, "media/\(index % 7)/f\(index)/x.txt", "\(index)") }
        for index in [0, SecureDiskWriter.openFolderLimit, count - 1] {
            #expect(try String(contentsOf: root.appending(path: "media/\(index % 7)/f\(index)/x.txt"), encoding: .utf8) == "\(index)")
        }
    }
}
