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
        // Paths that come back to the issue folder itself are refused, not resolved (they crashed).
        for (written, directory) in [(".", ""), ("./", ""), ("a/..", ""), ("../..", "articles/7"), ("images/../../..", "articles/7")] {
            #expect(resolvedID(tree, written, from: directory) == "source.file-missing", "\(written) from \(directory)")
        }
        #expect(resolvedID(tree, "..", from: "") == "source.path-outside")
        #expect(resolvedID(tree, "../../..", from: "articles/7") == "source.path-outside")

        // A folder made a link after it was found plain is not seen again (nor was it between
        // the look-up and the read before), but a copy of the tree made afresh sees it.
        try FileManager.default.removeItem(at: root.appending(path: "articles/7/images"))
        try FileManager.default.createSymbolicLink(atPath: root.appending(path: "articles/7/images").path,
                                                   withDestinationPath: outside.path)
        #expect(resolvedID(SourceTree(root: root), "images/photo.png", from: "articles/7") == "source.symlink-outside")
    }
}

/// Reading a source folder's text files: whole, whatever their size; nothing but a regular
/// file; and pack's one read of an article's body file agreeing with the two-step way.
@Suite struct SourceReadingTests {
    @Test(arguments: [0, 1, 4095, 65_536, 200_001])
    func aFileIsReadWhole(_ size: Int) throws {
        let folder = try Scratch.folder("galley-readwhole")
        let path = folder.appending(path: "f.md").path
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try readWholeFile(path) == bytes)
    }

    @Test func aFileIsReadOnlyAtItsExpectedSizeAndNeverPastIt() throws {
        let folder = try Scratch.folder("galley-readexpected")
        let path = folder.appending(path: "a.jpg").path
        try Data(repeating: 7, count: 1_000).write(to: URL(fileURLWithPath: path))
        #expect(try readFile(path, expecting: 1_000) == [UInt8](repeating: 7, count: 1_000))
        #expect(try readFile(path, expecting: 999) == nil, "grew")
        #expect(try readFile(path, expecting: 1_001) == nil, "shrank")
        #expect(try readFile(path, expecting: 0) == nil)
        let fifo = folder.appending(path: "pipe.jpg").path
        try #require(mkfifo(fifo, 0o600) == 0)
        #expect(throws: POSIXError(.ESPIPE), "a FIFO is refused at once") { try readFile(fifo, expecting: 10) }
        #expect(throws: POSIXError(.ENOENT)) { try readFile(folder.appending(path: "none.jpg").path, expecting: 1) }
    }

    @Test func aFolderAFIFOAndAMissingFileAreRefusedWithoutWaiting() throws {
        let folder = try Scratch.folder("galley-readwhole-kinds")
        let fifo = folder.appending(path: "pipe.md").path
        try #require(mkfifo(fifo, 0o600) == 0)
        for (path, code) in [(folder.path, POSIXErrorCode.EINVAL), (fifo, .EINVAL), (folder.appending(path: "none.md").path, .ENOENT)] {
            #expect(throws: POSIXError(code)) { try readWholeFile(path) }
        }
    }

    @Test func loadingAnArticleWithItsBodyGivesItsFieldsAndItsPreparedBody() throws {
        let root = try Scratch.folder("galley-loadbody").appending(path: "issue")
        let article = root.appending(path: "articles/01-harbour")
        try FileManager.default.createDirectory(at: article, withIntermediateDirectories: true)
        try Data("title: Winter\napple_id: org.example.winter\npublish_date: 2026-01-01\n".utf8).write(to: root.appending(path: "issue.yaml"))
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16]).write(to: article.appending(path: "a.jpg"))
        try Data("---\ntitle: Harbour\nkeywords: ferry , night,quay\nassets:\n  - file: a.jpg\n---\nText <img src=\"a.jpg\"> and <img src=\"b.jpg\">.\n".utf8)
            .write(to: article.appending(path: "article.md"))
        let loader = IssueSourceLoader()
        let source = try #require(try loader.load(root).source)
        let builder = BodyBuilder()
        builder.prepare()
        let folder = try #require(source.articleFolders.first)
        let once = loader.loadArticleAndBody(folder, of: source, builder: builder)
        let (fieldsOnly, found) = loader.loadArticle(folder, of: source)
        let text = try String(contentsOf: article.appending(path: "article.md"), encoding: .utf8)
        let front = FrontMatter.split(text)
        let expected = builder.prepare(front.body, format: .markdown, file: "articles/01-harbour/article.md", lineOffset: front.bodyLineOffset)
        #expect(once.article?.title == "Harbour")
        #expect(once.article?.keywords == ["ferry", "night", "quay"])
        #expect(once.article?.assets.map(\.file) == fieldsOnly?.assets.map(\.file))
        #expect(found.isEmpty)
        #expect(once.body?.html == expected.html)
        #expect(once.body?.references.map(\.location) == expected.references.map(\.location))
        #expect(once.files.mapValues(\.path) == ["a.jpg": article.appending(path: "a.jpg").path])
        // The missing b.jpg is reported once, located in the body.
        #expect(once.diagnostics.map(\.id.rawValue) == ["source.file-missing"])
        #expect(once.diagnostics.first?.location?.path == "articles/01-harbour/article.md")
    }
}
