import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyFormats

/// `SourceTree.resolveFile` looks each plain folder up once and remembers it, so a pack does
/// not check `articles` and `articles/<slug>` again for every file. What it remembers must never
/// let a link through: a folder that is a link is looked at every time.
@Suite struct SourceTreeTests {
    func resolvedID(_ tree: SourceTree, _ written: String, from directory: String) -> String {
        switch tree.resolveFile(written, from: directory, at: SourceLocation(path: directory), what: "image") {
        case .file(let file): return "file \(file.relativePath) \(file.size)"
        case .problem(let diagnostic): return diagnostic.id.rawValue
        }
    }

    @Test func aLinkedFolderIsRefusedWhateverWasResolvedBefore() throws {
        let base = try Scratch.folder("galley-sourcetree")
        let root = base.appending(path: "issue")
        let outside = base.appending(path: "outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try Data("secret".utf8).write(to: outside.appending(path: "photo.png"))
        // 300 articles with a plain `images` folder: more folders than the tree remembers at once.
        for number in 0..<300 {
            let images = root.appending(path: "articles/\(number)/images")
            try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
            try Data("png".utf8).write(to: images.appending(path: "photo.png"))
        }
        try FileManager.default.createDirectory(at: root.appending(path: "articles/linked"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.appending(path: "articles/linked/images").path,
                                                   withDestinationPath: outside.path)
        let tree = SourceTree(root: root)

        for number in 0..<300 {
            #expect(resolvedID(tree, "images/photo.png", from: "articles/\(number)") == "file articles/\(number)/images/photo.png 3")
            if number % 100 == 0 {
                #expect(resolvedID(tree, "images/photo.png", from: "articles/linked") == "source.symlink-outside")
            }
        }
        #expect(resolvedID(tree, "../linked/images/photo.png", from: "articles/7") == "source.symlink-outside")
        #expect(resolvedID(tree, "images/missing.png", from: "articles/7") == "source.file-missing")
        #expect(resolvedID(tree, "images", from: "articles/7") == "source.file-missing")

        // A folder made a link after it was found plain is not seen again (nor was it between
        // the look-up and the read before), but a copy of the tree made afresh sees it.
        try FileManager.default.removeItem(at: root.appending(path: "articles/7/images"))
        try FileManager.default.createSymbolicLink(atPath: root.appending(path: "articles/7/images").path,
                                                   withDestinationPath: outside.path)
        #expect(resolvedID(SourceTree(root: root), "images/photo.png", from: "articles/7") == "source.symlink-outside")
    }
}
