import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyFormats

/// `ZipEntryReader` reads each entry at the offset Galley's own directory found, in file order,
/// and refuses damage: a CRC that does not match, a deflate stream cut short or ending before
/// the entry's compressed data does, more bytes than declared. The zips are written byte by
/// byte here (`HandMadeZip`).
@Suite struct ZipEntryReaderTests {
    func reader(_ bytes: [UInt8]) throws -> ZipEntryReader {
        let path = Scratch.path("galley-zipentryreader", suffix: ".zip").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try ZipEntryReader(path: path, directory: ZipDirectory.read(path: path, maxEntries: 10))
    }

    /// Every entry's name and text, in the order the reader gives them.
    func readAll(_ reader: ZipEntryReader) throws -> [String] {
        var seen: [String] = []
        while let entry = reader.next() {
            var bytes: [UInt8] = []
            let (count, complete) = try reader.read(limit: 1 << 20) { bytes += $0 }
            #expect(complete && count == bytes.count)
            seen.append("\(entry.name)=\(String(decoding: bytes, as: UTF8.self))")
        }
        return seen
    }

    @Test func storedAndDeflatedEntriesComeOutInFileOrder() throws {
        let members = [HandMadeZip.stored("a/one.txt", "first"), HandMadeZip.deflated("a/two.txt", "second, deflated"), HandMadeZip.stored("a/three.txt", "")]
        #expect(try readAll(reader(HandMadeZip.zip(members))) == ["a/one.txt=first", "a/two.txt=second, deflated", "a/three.txt="])
        // The directory's order is not the file's: the file's wins, and each entry keeps its number.
        let shuffled = try reader(HandMadeZip.zip(members, directoryOrder: [2, 0, 1]))
        var numbers: [Int] = []
        var names: [String] = []
        while let entry = shuffled.next() {
            numbers.append(entry.number)
            names.append(entry.name)
        }
        #expect(names == ["a/one.txt", "a/two.txt", "a/three.txt"])
        #expect(numbers == [1, 2, 0])
    }

    /// A consumer that keeps every chunk it was handed (as an import's hashing thread keeps
    /// those it has not hashed yet) finds each still holding its bytes, whether the reader takes
    /// turns with buffers for it (`keepsChunks`) or not, and however many more it keeps than
    /// that: a buffer still kept is copied before it is written again, never written over.
    @Test(arguments: [0, 1, 3])
    func chunksKeptByTheConsumerKeepTheirBytes(keepsChunks: Int) throws {
        // Entries of many 64 KiB chunks, stored and deflated, each chunk's bytes its own.
        let texts = (0..<3).map { (entry: Int) -> String in
            let letters: [UInt8] = (0..<300_000).map { (index: Int) -> UInt8 in UInt8(65 + (index / 65_536 + entry * 7) % 26) }
            return String(decoding: letters, as: UTF8.self)
        }
        let members = [HandMadeZip.stored("a/one.txt", texts[0]), HandMadeZip.deflated("a/two.txt", texts[1]), HandMadeZip.stored("a/three.txt", texts[2])]
        let reader = try reader(HandMadeZip.zip(members))
        reader.keepsChunks = keepsChunks
        var kept: [[ArraySlice<UInt8>]] = []
        while reader.next() != nil {
            var chunks: [ArraySlice<UInt8>] = []
            _ = try reader.read(limit: 1 << 20) { chunks.append($0) }
            kept.append(chunks)
        }
        #expect(kept.allSatisfy { $0.count >= 5 }, "chunks of at most 64 KiB: more than the ring")
        #expect(kept.map { String(decoding: Array($0.joined()), as: UTF8.self) } == texts)
    }

    @Test func aCRCThatDoesNotMatchIsAChecksumError() throws {
        for var member in [HandMadeZip.stored("a/x.txt", "content"), HandMadeZip.deflated("a/x.txt", "content")] {
            member.crc ^= 1
            let reader = try reader(HandMadeZip.zip([member]))
            _ = reader.next()
            #expect {
                _ = try reader.read(limit: 100) { _ in }
            } throws: { ($0 as? ZipEntryReader.ReadError)?.isChecksum == true }
        }
    }

    @Test func aDeflateStreamCutShortOrEndingEarlyIsDamage() throws {
        // Cut short: the compressed size ends inside the stored block.
        var cut = HandMadeZip.deflated("a/x.txt", "0123456789")
        cut.data.removeLast(3)
        // Ending early: bytes after the final block, inside the entry's compressed size.
        var padded = HandMadeZip.deflated("a/x.txt", "0123456789")
        padded.data += [0xDE, 0xAD]
        for (member, words) in [(cut, "ends inside its deflate stream"), (padded, "ends 2 bytes before")] {
            let reader = try reader(HandMadeZip.zip([member]))
            _ = reader.next()
            #expect {
                _ = try reader.read(limit: 100) { _ in }
            } throws: { error in
                let message = (error as? ZipEntryReader.ReadError)?.message ?? ""
                return message.contains(words) && !message.contains("CRC")
            }
        }
    }

    @Test func noMoreThanTheLimitIsHandedOn() throws {
        let reader = try reader(HandMadeZip.zip([HandMadeZip.deflated("a/x.txt", String(repeating: "z", count: 500))]))
        _ = reader.next()
        var handed = 0
        let (count, complete) = try reader.read(limit: 100) { handed += $0.count }
        #expect(handed == 100)
        #expect(count > 100 && !complete)
        #expect(reader.next() == nil)
    }

    /// An entry left before its end (read up to a limit) leaves nothing behind for the next:
    /// zlib's unread input belongs to the entry that was left.
    @Test func anEntryLeftHalfReadDoesNotFeedTheNext() throws {
        // More than one chunk of output (64 KiB), so zlib still holds input when it is left.
        let long = String(repeating: "0123456789", count: 20_000)
        let reader = try reader(HandMadeZip.zip([HandMadeZip.deflated("a/one.txt", long), HandMadeZip.deflated("a/two.txt", "second")]))
        _ = reader.next()
        let (_, complete) = try reader.read(limit: 70_000) { _ in }
        #expect(!complete)
        #expect(reader.next()?.name == "a/two.txt")
        var bytes: [UInt8] = []
        _ = try reader.read(limit: 100) { bytes += $0 }
        #expect(String(decoding: bytes, as: UTF8.self) == "second")
    }

    /// The CRC-32 (libdeflate's) is carried from chunk to chunk: entries of many 64 KiB chunks,
    /// across several of the reader's 256 KiB windows, pass against this file's own bitwise
    /// CRC, and one changed byte near the end of such an entry is caught.
    @Test func aCRCIsCarriedAcrossChunksAndWindows() throws {
        let text = (0..<90_000).map { String($0 &* 7919 % 100_003) }.joined(separator: ",")
        #expect(text.utf8.count > 500_000)
        let members = [HandMadeZip.stored("a/long.txt", text), HandMadeZip.deflated("a/long-deflated.txt", text), HandMadeZip.stored("a/short.txt", "end")]
        #expect(try readAll(reader(HandMadeZip.zip(members))) == ["a/long.txt=\(text)", "a/long-deflated.txt=\(text)", "a/short.txt=end"])
        for var member in members.prefix(2) {
            member.data[member.data.count - 10] ^= 0x20
            let reader = try reader(HandMadeZip.zip([member]))
            _ = reader.next()
            #expect {
                _ = try reader.read(limit: 1 << 20) { _ in }
            } throws: { ($0 as? ZipEntryReader.ReadError)?.isChecksum == true }
        }
    }

    @Test func anUnsupportedMethodIsRefusedWithoutReading() throws {
        var member = HandMadeZip.stored("a/x.txt", "content")
        member.method = 12  // bzip2
        let reader = try reader(HandMadeZip.zip([member]))
        _ = reader.next()
        #expect {
            _ = try reader.readChunk()
        } throws: { ($0 as? ZipEntryReader.ReadError)?.message == "unsupported compression method 12" }
    }
}
