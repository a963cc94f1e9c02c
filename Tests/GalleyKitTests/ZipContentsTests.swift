import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyFormats
@testable import GalleyKit

/// `ZipContents` finds a file by its name in the folder with a binary search over the
/// central directory's entries, sorted by their names' bytes: every file is found at its own
/// entry, and no other name is, however close (a prefix, a longer name, another case, a name
/// outside the folder).
@Suite struct ZipContentsTests {
    @Test func everyFileIsFoundAtItsEntryAndNoOtherName() throws {
        var random = SeededGenerator(state: 7)
        var names = ["a", "a.txt", "a/b.txt", "a/b", "ab", "A", "B.jpg", "\u{E9}.txt", "e\u{301}.txt", "z", "zz/zz/zz.png",
                     "images/hero.jpg", "images/hero.jpeg", "images/hero.jpg.bak", "latest.json"]
        for number in 0..<300 { names.append("articles/\(random.below(100_000))-\(number).jpg") }
        // The directory lists them in no particular order, with one file outside the folder.
        var shuffled = names
        for i in shuffled.indices.reversed() { shuffled.swapAt(i, random.below(i + 1)) }
        var members = shuffled.map { HandMadeZip.stored("issue/\($0)", $0) }
        members.append(HandMadeZip.stored("other/a.txt", "outside"))
        let path = Scratch.path("galley-zipcontents", suffix: ".zip").path
        try Data(HandMadeZip.zip(members)).write(to: URL(fileURLWithPath: path))
        let directory = try ZipDirectory.read(path: path, maxEntries: 1_000)
        let contents = ZipContents(directory, top: "issue")

        for (number, name) in shuffled.enumerated() {
            #expect(contents.entryNumber(name) == number, "\(name)")
        }
        for absent in ["", "a.tx", "a.txt2", "a/", "a/b.tx", "Ab", "b.jpg", "e.txt", "images/hero", "images/hero.jp", "zz/zz",
                       "issue/a.txt", "other/a.txt", "../other/a.txt", "articles/1.jpg"] {
            #expect(contents.entryNumber(absent) == nil, "\(absent)")
        }
        // In the order of their bytes (UTF-8), the order `galley validate` lists them in.
        #expect(contents.files.map(\.name) == names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }
}
