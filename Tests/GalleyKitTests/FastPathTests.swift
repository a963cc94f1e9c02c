import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit

/// The byte-level shortcuts that replaced Foundation calls on validate's hot paths give
/// Foundation's answers, on plain and awkward input alike.
@Suite struct FastPathTests {
    static let texts = [
        "", " ", "\t", "a", " a", "a ", "\ta\t", "2026-11-24T10:00:00Z", "\n x \n", "\u{00A0}x", "x\u{2003}",
        "\u{3000}", "é", " é ", "\r\n", "\u{0B}v\u{0C}", "a b", "👩‍👩‍👧", " \u{85}",
        " \u{301}a", "a\u{301} ", " \t x\u{00A0} ", "\u{00A0} a ", " a\u{00A0}", "\r\n\u{2028}x\u{2029} \n", " a.jpg", "  ",
    ]

    @Test func trimmingAgreesWithFoundationOnRandomTexts() {
        let pieces = [" ", "\t", "\n", "\r", "\u{0B}", "a", "é", "\u{301}", "\u{00A0}", "\u{2003}", "\u{85}", "\u{2028}", "👩‍👧", "x y"]
        var generator = SeededGenerator(state: 5)
        for _ in 0..<2_000 {
            let text = (0..<generator.below(7)).map { _ in pieces[generator.below(pieces.count)] }.joined()
            #expect(text.trimmingWhitespaces() == text.trimmingCharacters(in: .whitespaces), "\(text.debugDescription)")
            #expect(text.trimmingWhitespacesAndNewlines() == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(text.debugDescription)")
        }
    }

    @Test(arguments: texts)
    func trimmingAgreesWithFoundation(text: String) {
        #expect(text.trimmingWhitespaces() == text.trimmingCharacters(in: .whitespaces))
        #expect(text.trimmingWhitespacesAndNewlines() == text.trimmingCharacters(in: .whitespacesAndNewlines))
        let slice = Substring(text)
        #expect(slice.trimmingWhitespaces() == slice.trimmingCharacters(in: .whitespaces))
    }

    /// `isWhiteSpace` answers ASCII without Unicode's tables: the same answers, every ASCII
    /// scalar and the other white space Unicode has.
    @Test func whiteSpaceAgreesWithUnicodesTables() {
        let others: [Unicode.Scalar] = ["\u{85}", "\u{A0}", "\u{1680}", "\u{2003}", "\u{2028}", "\u{2029}", "\u{202F}", "\u{3000}", "é", "\u{200B}", "\u{FEFF}"]
        for scalar in (0...0x7F).compactMap(Unicode.Scalar.init) + others {
            #expect(scalar.isWhiteSpace == scalar.properties.isWhitespace, "U+\(String(scalar.value, radix: 16))")
        }
    }

    @Test(arguments: ["a.JPG", "issue/images/b.png", "x/.hidden", ".hidden", "no-extension", "dir.d/file", "a.tar.gz", "a.", "x/y.Svg", ""])
    func pathExtensionAgreesWithFoundation(name: String) {
        #expect(MediaChecks.pathExtension(name) == (name as NSString).pathExtension.lowercased())
    }

    @Test func dotDotIsFoundAsAWholePartOnly() {
        for name in ["../x", "a/../b", "a/..", "..", "a\\..\\b", "..\\x", "/..", ".../..", "a.b/../"] {
            #expect(ContainerChecks.hasDotDot(name.utf8), "\(name)")
        }
        for name in ["...", "a/..b", "a/b..", ".", "a/./b", "x", "", "/", ".a", ".a./b"] {
            #expect(!ContainerChecks.hasDotDot(name.utf8), "\(name)")
        }
    }

    @Test(arguments: ["Issue/A.JPG", "issue/a.jpg", "Ünïcode/Café.png", "Cafe\u{301}/X", "MiXeD_09-.txt"])
    func foldingAgreesWithFoundation(name: String) {
        #expect(ContainerChecks.folded(name, raw: Array(name.utf8)) == name.precomposedStringWithCanonicalMapping.lowercased())
    }

    /// `ReferenceChecks.pathProblem` before it read bytes: the oracle on text without combining
    /// marks, where characters and bytes split alike.
    static func characterPathProblem(_ value: String) -> String? {
        if value.hasPrefix("/") { return "is absolute" }
        if value.contains("\\") { return "contains a backslash" }
        if value.split(separator: "/", omittingEmptySubsequences: false).contains("..") { return "contains `..`" }
        if value.unicodeScalars.contains(where: { $0.value < 0x20 }) { return "contains a control character" }
        return nil
    }

    @Test func referencePathProblemsAgreeWithTheCharacterCheckOnRandomPaths() {
        let pieces = ["/", "\\", ".", "..", "a", "é", "\t", "\n", "\u{1F}", "\u{7F}", " ", "👩‍👧", "x.jpg", "\u{0}"]
        var generator = SeededGenerator(state: 12)
        var seen = Set<String?>()
        for _ in 0..<5_000 {
            let path = (0..<generator.below(8)).map { _ in pieces[generator.below(pieces.count)] }.joined()
            let expected = Self.characterPathProblem(path)
            #expect(ReferenceChecks.pathProblem(path) == expected, "\(path.debugDescription)")
            seen.insert(expected)
        }
        // Every answer, and none, came up: the draw reaches each branch.
        #expect(seen.count == 5)
    }

    /// Where a combining mark follows `/`, characters hide what the file system sees: the bytes
    /// `..` then `/` go up a folder, and a leading `/` is the root. The byte check says so.
    @Test func referencePathProblemsReadBytesNotCharacters() {
        #expect(ReferenceChecks.pathProblem("../\u{301}x.jpg") == "contains `..`")
        #expect(ReferenceChecks.pathProblem("/\u{301}x.jpg") == "is absolute")
        #expect(ReferenceChecks.pathProblem("a/..\u{301}/b") == nil)
        #expect(ReferenceChecks.pathProblem("images/a.jpg") == nil)
    }

    /// `SourceTree.pathProblem` and `nameProblem` before they read bytes: the oracles.
    static func scalarPathProblem(_ path: String) -> String? {
        // By scalar: the checks by character (`hasPrefix("/")`, `contains("\\")`) missed a `/`
        // or a backslash that a combining mark follows, which the bytes do not.
        if let first = path.unicodeScalars.first, first == "/" || first == "~" { return "is absolute" }
        if path.unicodeScalars.contains("\\") { return "contains a backslash" }
        if path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return "contains a control character" }
        if path.count >= 2, path.dropFirst().first == ":", path.first?.isLetter == true { return "is a drive path" }
        return nil
    }

    static func scalarNameProblem(_ name: String) -> String? {
        if name.utf8.count > 255 { return "is longer than 255 bytes" }
        if name.hasPrefix(" ") || name.hasSuffix(" ") { return "starts or ends with a space" }
        if name.hasSuffix(".") { return "ends with a dot" }
        for scalar in name.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F { return "contains a control character" }
            if "\\:*?\"<>|".unicodeScalars.contains(scalar) { return "contains `\(scalar)`" }
        }
        return nil
    }

    /// Combining marks included: every character these look for is one byte that no other
    /// character's UTF-8 holds, so bytes and scalars agree everywhere.
    @Test func sourcePathAndNameProblemsAgreeWithTheScalarChecksOnRandomText() {
        let pieces = ["/", "~", "\\", ":", "a", "C", "é", "\u{301}", "\t", "\n", "\u{7F}", "\u{0}", " ", ".", "*", "?", "\"",
                      "<", ">", "|", "👩‍👧", "x.jpg", "\u{85}"]
        var generator = SeededGenerator(state: 54)
        var paths = Set<String?>(), names = Set<String?>()
        for _ in 0..<5_000 {
            let text = (0..<generator.below(6)).map { _ in pieces[generator.below(pieces.count)] }.joined()
            let path = Self.scalarPathProblem(text), name = Self.scalarNameProblem(text)
            #expect(SourceTree.pathProblem(text) == path, "\(text.debugDescription)")
            #expect(SourceTree.nameProblem(text) == name, "\(text.debugDescription)")
            paths.insert(path)
            names.insert(name)
        }
        // Every answer came up: no problem, absolute, backslash, control, drive path; and for
        // names: none, space, dot, control, and each of the eight refused characters.
        #expect(paths.count == 5)
        #expect(names.count == 4 + 8)
        #expect(SourceTree.nameProblem(String(repeating: "é", count: 128)) == "is longer than 255 bytes")
        #expect(SourceTree.pathProblem("a\\\u{301}b.jpg") == "contains a backslash")
        #expect(SourceTree.pathProblem("/\u{301}x.jpg") == "is absolute")
    }

    @Test func componentLengthsKeepEmptyParts() {
        #expect(ContainerChecks.componentLengths("a//bc/".utf8, separatedBy: UInt8(ascii: "/")) == [1, 0, 2, 0])
        #expect(ContainerChecks.componentLengths("".utf8, separatedBy: UInt8(ascii: "/")) == [0])
    }

    /// The word-at-a-time scans answer as the byte-by-byte ones, wherever in a word, a
    /// four-word block or the tail the deciding byte sits, and on substrings that start
    /// mid-word of their string.
    @Test func byteScansAgreeWithTheByteByByteAnswers() {
        var generator = SeededGenerator(state: 12)
        let pieces = ["a", " ", "\n", "\r", "é", "x\r\n", "👩‍👧", "\u{7F}", "0123456789abcdef", "\u{80}"]
        var answers = Set<[Bool]>()
        for _ in 0..<3_000 {
            let text = (0..<generator.below(40)).map { _ in pieces[generator.below(pieces.count)] }.joined()
            let start = text.utf8.index(text.utf8.startIndex, offsetBy: generator.below(text.utf8.count + 1))
            for sample in [Substring(text), text[start...]] {
                let expected = [sample.utf8.allSatisfy { $0 < 0x80 }, sample.utf8.contains(13)]
                #expect([ByteScan.isASCII(sample), ByteScan.contains(13, in: sample)] == expected, "\(sample.debugDescription)")
                answers.insert(expected)
            }
        }
        // Every combination came up, a non-ASCII byte at each offset of a 32-byte block too.
        #expect(answers.count == 4)
        for length in 0..<70 {
            for at in 0..<length {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                bytes[at] = 0xC3
                #expect(!bytes.withUnsafeBufferPointer(ByteScan.isASCII), "\(length) \(at)")
                bytes[at] = 13
                #expect(bytes.withUnsafeBufferPointer(ByteScan.isASCII))
                #expect(bytes.withUnsafeBufferPointer { ByteScan.contains(13, in: $0) })
            }
        }
    }
}
