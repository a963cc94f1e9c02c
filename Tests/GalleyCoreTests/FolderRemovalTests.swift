import Foundation
import Glibc
import GalleyTestSupport
import Testing
@testable import GalleyCore

/// `FolderRemoval`: a whole tree goes, links are removed and never followed, names that are
/// not UTF-8 go too, and a folder of more names than one batch is read again until empty.
struct FolderRemovalTests {
    @Test func aTreeGoesWithItsLinksButNotWhatTheyPointAt() throws {
        let scratch = try Scratch.folder("galley-removal")
        let outside = scratch.appending(path: "outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: outside.appending(path: "kept.txt"))

        let tree = scratch.appending(path: "tree")
        let deep = tree.appending(path: "a/b/c")
        try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: tree.appending(path: "empty"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: deep.appending(path: "file.jpg"))
        try Data().write(to: tree.appending(path: "a/empty-file"))
        // More files than one batch reads, in the top folder and in a subfolder.
        for i in 0..<(FolderRemoval.batch + 5) {
            #expect(FileManager.default.createFile(atPath: tree.appending(path: "f\(i)").path, contents: nil))
        }
        for i in 0..<(FolderRemoval.batch + 1) {
            #expect(FileManager.default.createFile(atPath: deep.appending(path: "g\(i)").path, contents: nil))
        }
        // Links to the folder and the file outside, and one to nothing.
        try FileManager.default.createSymbolicLink(atPath: tree.appending(path: "to-outside").path, withDestinationPath: outside.path)
        try FileManager.default.createSymbolicLink(atPath: deep.appending(path: "to-kept").path,
                                                   withDestinationPath: outside.appending(path: "kept.txt").path)
        try FileManager.default.createSymbolicLink(atPath: tree.appending(path: "dangling").path, withDestinationPath: "/nonexistent/x")
        // A name that is not UTF-8 (0xFF), made with open(2) itself.
        var bytes = Array(tree.path.utf8) + Array("/bad-".utf8) + [0xFF, 0]
        let fd = bytes.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) }
        }
        #expect(fd >= 0)
        close(fd)

        try FolderRemoval.remove(tree.path)
        #expect(!FileManager.default.fileExists(atPath: tree.path))
        #expect(FileStatus(tree.path, follow: false) == nil)
        #expect(try String(contentsOf: outside.appending(path: "kept.txt"), encoding: .utf8) == "keep")
    }

    @Test func aFileOrALinkIsRemovedItselfAndNothingIsNoError() throws {
        let scratch = try Scratch.folder("galley-removal")
        let file = scratch.appending(path: "file.zip")
        try Data("zip".utf8).write(to: file)
        try FolderRemoval.remove(file.path)
        #expect(!FileManager.default.fileExists(atPath: file.path))

        let target = scratch.appending(path: "target")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: target.appending(path: "inside"))
        let link = scratch.appending(path: "link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target.path)
        try FolderRemoval.remove(link.path)
        #expect(FileStatus(link.path, follow: false) == nil)
        #expect(FileManager.default.fileExists(atPath: target.appending(path: "inside").path))

        try FolderRemoval.remove(scratch.appending(path: "never-there").path)
    }
}
