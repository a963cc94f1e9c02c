import CompressNIO
import Foundation
import GalleyCore
@testable import GalleyServe
import GalleyTestSupport
import NIOCore
import Testing

/// Large answers (`/issues/{id}`, `/assets`) go to an unlinked temporary file past the answer
/// cache's largest entry, and come back byte for byte, plain or gzipped.
@Suite struct AnswerSpoolTests {
    /// A folder of its own, so that what is left in it is this test's.
    let folder: String

    init() throws {
        let url = Scratch.path("galley-spool")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        folder = url.path
    }

    func leftInFolder() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder) }

    static func text(_ count: Int) -> String {
        String((0..<count).map { Character(UnicodeScalar(UInt8(0x61 + $0 % 26))) })
    }

    static func bytes(_ file: SpoolFile) throws -> [UInt8] {
        var all: [UInt8] = []
        var offset: Int64 = 0
        while offset < file.size {
            let chunk = try file.read(at: offset, count: 1000)
            all += chunk.readableBytesView
            offset += Int64(chunk.readableBytes)
        }
        #expect(try file.read(at: file.size, count: 10).readableBytes == 0)
        return all
    }

    @Test func upToTheLimitItStaysInMemory() throws {
        let spool = AnswerSpool(memoryLimit: 100, folder: folder)
        spool.write(Self.text(60))
        spool.write(Self.text(40))
        guard case .memory(let bytes) = try spool.finish() else {
            Issue.record("100 bytes with a limit of 100 went to a file")
            return
        }
        #expect(String(buffer: bytes) == Self.text(60) + Self.text(40))
        #expect(try leftInFolder().isEmpty)
    }

    @Test func pastTheLimitEverythingGoesToAFileNobodyCanOpen() throws {
        let spool = AnswerSpool(memoryLimit: 100, folder: folder)
        spool.write(Self.text(60))
        spool.write(Self.text(41))
        spool.write(Self.text(5000))
        guard case .file(let file) = try spool.finish() else {
            Issue.record("101 bytes with a limit of 100 stayed in memory")
            return
        }
        #expect(file.size == 5101)
        #expect(try Self.bytes(file) == Array((Self.text(60) + Self.text(41) + Self.text(5000)).utf8))
        // Unlinked as soon as it was made: nothing to clean up, whatever happens next.
        #expect(try leftInFolder().isEmpty)
    }

    @Test func aZeroLimitWritesStraightToTheFile() throws {
        let spool = AnswerSpool(memoryLimit: 0, folder: folder)
        spool.write("{}")
        guard case .file(let file) = try spool.finish() else {
            Issue.record("a zero limit kept the bytes in memory")
            return
        }
        #expect(try Self.bytes(file) == Array("{}".utf8))
    }

    @Test func gzippedFileToFileItInflatesToTheSameBytes() throws {
        // Several chunks of the download's size, the last one short.
        let text = Self.text(Int(GalleyServer.chunkLength) * 2 + 12345)
        let spool = AnswerSpool(memoryLimit: 0, folder: folder)
        spool.write(text)
        guard case .file(let file) = try spool.finish() else { return }
        let gzipped = try AnswerSpool.gzipped(file, folder: folder)
        #expect(gzipped.size < file.size / 10)
        var compressed = ByteBuffer(bytes: try Self.bytes(gzipped))
        let inflated = try compressed.decompress(with: .gzip())
        #expect(String(buffer: inflated) == text)
        #expect(try leftInFolder().isEmpty)
    }

    @Test func aFolderItCannotWriteToIsAnErrorThatSaysWhereAndWhat() throws {
        let missing = folder + "/missing"
        let spool = AnswerSpool(memoryLimit: 10, folder: missing)
        spool.write(Self.text(5))
        spool.write(Self.text(50))
        #expect(spool.failure != nil)
        do {
            _ = try spool.finish()
            Issue.record("a spool that could not write finished")
        } catch let error as GalleyError {
            #expect(error.id == .storeFailed)
            #expect(error.path == nil, "the error goes to a client: no server folder in it")
            #expect(error.message.contains("temporary file"))
            #expect(error.hint?.contains("TMPDIR") == true)
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// A list whose spool cannot write stops reading rows at the next item, and the answer is
    /// the spool's error, not a document cut short.
    @Test func aListWhoseSpoolFailsStopsAndThrowsTheFailure() throws {
        var produced = 0
        do {
            _ = try JSONBody(key: "items", memoryLimit: 10, folder: folder + "/missing") { (send: (String) throws -> Void) in
                for item in 0..<1000 {
                    produced += 1
                    try send("item \(item)")
                }
            }
            Issue.record("the list was made")
        } catch let error as GalleyError {
            #expect(error.id == .storeFailed)
        }
        #expect(produced < 5, "\(produced) items read after the spool failed")
    }
}
