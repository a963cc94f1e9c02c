import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore

/// `FileDigest.of(_:copyingTo:)` keeps an import's zip: written with direct I/O past the page
/// cache, hashed as it passes (or, where the file system has no direct I/O, copied by the kernel
/// and hashed through 2 MiB mappings of its pages). The digest and the copy must be the file's
/// whatever its size falls on: empty, under a block, one block and a bit, one buffer exactly
/// and a bit over, two mapping windows, and two and a bit, each both ways; checked against
/// coreutils' `sha256sum` and the plain reading path.
@Suite struct FileDigestTests {
    /// `sha256sum`'s digest of `path`: a reference outside Galley and its crypto library.
    static func coreutilsDigest(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }

    /// coreutils' name for the type of the file system holding `path` (`stat -f`).
    static func fileSystemType(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/stat")
        process.arguments = ["-f", "-c", "%T", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A scratch file of `size` bytes that differ along it, and where its copy goes.
    static func original(size: Int) throws -> (original: URL, copy: URL, bytes: [UInt8]) {
        let folder = try Scratch.folder("galley-filedigest")
        let original = folder.appending(path: "original.zip")
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 11) }
        try Data(bytes).write(to: original)
        return (original, folder.appending(path: "copy.zip"), bytes)
    }

    @Test(arguments: [0, 1_000, 4_096, 4_097, 1 << 20, (1 << 20) + 1, 2 << 20, (4 << 20) + 123], [true, false])
    func aCopysDigestIsTheFilesSHA256(size: Int, direct: Bool) throws {
        let (original, copy, bytes) = try Self.original(size: size)

        let digest = try FileDigest.of(original.path, copyingTo: copy.path, direct: direct)

        #expect(digest.size == Int64(size))
        #expect(digest.sha256 == (try Self.coreutilsDigest(original.path)))
        #expect(digest == (try FileDigest.of(original.path)))
        #expect(try Data(contentsOf: copy) == Data(bytes))
    }

    /// The copy hashed on an import's hashing thread, paired with the files it hashes meanwhile
    /// or in the gaps between them: the same digest and copy, and the files' digests their own,
    /// both ways of copying.
    @Test(arguments: [0, 4_097, (4 << 20) + 123], [(direct: true, pairs: true), (true, false), (false, true), (false, false)])
    func aCopyHashedBesideFilesHasTheFilesSHA256(size: Int, way: (direct: Bool, pairs: Bool)) throws {
        let direct = way.direct
        let (original, copy, bytes) = try Self.original(size: size)
        let delivered = ParallelWorkTests.Digests()
        let hashing = HashingThread(pairs: way.pairs, deliver: delivered.add)
        let files = (0..<40).map { ParallelWorkTests.bytes($0 * 5_000, seed: UInt8($0)) }
        let copied = ParallelWorkTests.Box<FileDigest?>(nil)
        let done = DispatchSemaphore(value: 0)
        let copying = Thread {
            copied.value = try? FileDigest.of(original.path, copyingTo: copy.path, direct: direct, beside: hashing)
            done.signal()
        }
        copying.start()
        ParallelWorkTests.handOver(files, to: hashing, chunk: 65_536)
        hashing.endFiles()
        hashing.finish()
        done.wait()
        let digest = try #require(copied.value)
        #expect(digest.size == Int64(size))
        #expect(digest.sha256 == (try Self.coreutilsDigest(original.path)))
        #expect(try Data(contentsOf: copy) == Data(bytes))
        #expect(delivered.hex == files.map { SHA256Tests.digest($0, extensions: false) })
    }

    /// The copy's bytes go to the disk, not into new page-cache pages (which, on a virtual
    /// machine whose host takes free memory back, cost a host fault each and doubled what an
    /// import wrote to memory). Where the scratch folder's file system keeps files in memory
    /// (tmpfs) every page is resident whatever the way, and there is nothing to see.
    /// A digest's hex is its 32 bytes as lowercase hex, most significant first, whatever the
    /// bytes (each nibble value at each place, and the word edges).
    @Test func aDigestsHexIsItsBytesInOrder() {
        var random = SeededGenerator(state: 28)
        var cases: [[UInt8]] = [Array(repeating: 0, count: 32), Array(repeating: 0xFF, count: 32), (0..<32).map { UInt8($0 * 8 + 7) }]
        for _ in 0..<200 { cases.append((0..<32).map { _ in UInt8(truncatingIfNeeded: random.next()) }) }
        for bytes in cases {
            #expect(SHA256Digest(bytes).hex == bytes.map { String(format: "%02x", $0) }.joined())
        }
    }

    /// Once the caller waits for nothing else, the rest of a direct copy goes through the page
    /// cache only from a disk slower than the urgency's `slowDisk` (400 MB/s unless told): a
    /// cloud volume's 125 MB/s does, 1 GB/s does not, and nothing measured yet does not.
    @Test func onlyASlowDiskHandsTheCopyToThePageCache() {
        let slowDisk = CopyUrgency().slowDisk
        #expect(slowDisk == 400e6)
        let none = FileDigest.WriteSpeed()
        #expect(!none.isSlower(than: slowDisk))
        let cloud = FileDigest.WriteSpeed()
        cloud.add(bytes: 125_000_000, taking: .milliseconds(600))
        cloud.add(bytes: 125_000_000, taking: .milliseconds(1_400))
        #expect(cloud.isSlower(than: slowDisk))
        let local = FileDigest.WriteSpeed()
        for _ in 0..<10 { local.add(bytes: 1 << 20, taking: .microseconds(1_000)) }
        #expect(!local.isSlower(than: slowDisk))
        let edge = FileDigest.WriteSpeed()
        edge.add(bytes: 399_000_000, taking: .seconds(1))
        #expect(edge.isSlower(than: slowDisk))
        #expect(!edge.isSlower(than: 300e6))
    }

    @Test func aCopyLeavesThePageCacheAlone() throws {
        let folder = try Scratch.folder("galley-filedigest")
        guard try Self.fileSystemType(folder.path) != "tmpfs" else { return }
        let original = folder.appending(path: "original.zip")
        let size = (3 << 20) + 5
        try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: original)
        let copy = folder.appending(path: "copy.zip")

        let digest = try FileDigest.of(original.path, copyingTo: copy.path)

        #expect(try Self.residentPages(copy.path, size: size).filter { $0 }.count == 0, "pages of the copy in the page cache")
        #expect(digest == (try FileDigest.of(original.path)))
        #expect(try Data(contentsOf: copy) == (try Data(contentsOf: original)))
    }

    /// Once the caller raises the urgency (an import's pass has ended and waits for the copy
    /// alone) and the disk has been slow, the rest of the copy goes through the page cache
    /// instead of waiting for it. Here every disk counts as slow (`slowDisk` past any speed),
    /// and the urgency is raised before the copy starts: the switch comes once the first 1 MiB
    /// chunk's write was measured, which the writer thread has done by the time it takes the
    /// third (it takes one at a time, and at most one waits for it), so everything from the
    /// fourth chunk on is in the page cache; the bytes and the digest are the file's.
    @Test func anUrgentCopyFromASlowDiskGoesOnThroughThePageCache() throws {
        let folder = try Scratch.folder("galley-filedigest")
        guard try Self.fileSystemType(folder.path) != "tmpfs" else { return }
        let original = folder.appending(path: "original.zip")
        let size = (6 << 20) + 5
        try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }).write(to: original)
        let copy = folder.appending(path: "copy.zip")
        let urgency = CopyUrgency(slowDisk: .greatestFiniteMagnitude)
        urgency.raise()

        let digest = try FileDigest.of(original.path, copyingTo: copy.path, urgency: urgency)

        let resident = try Self.residentPages(copy.path, size: size)
        let direct = 3 * (1 << 20) / 4096
        #expect(resident.dropFirst(direct).filter { !$0 }.count == 0, "from the fourth chunk on, through the page cache")
        #expect(digest == (try FileDigest.of(original.path)))
        #expect(try Data(contentsOf: copy) == (try Data(contentsOf: original)))
    }

    /// An abandoned copy (an import's pass refused the zip) stops with `ECANCELED`, whatever its
    /// way: a direct copy at its next chunk, having written no more than its first; the
    /// kernel's copy before it starts (it goes 64 MiB at a time).
    @Test(arguments: [true, false])
    func anAbandonedCopyStops(direct: Bool) throws {
        let folder = try Scratch.folder("galley-filedigest")
        let original = folder.appending(path: "original.zip")
        try Data((0..<((3 << 20) + 5)).map { UInt8(truncatingIfNeeded: $0 &* 17) }).write(to: original)
        let copy = folder.appending(path: "copy.zip")
        let urgency = CopyUrgency()
        urgency.abandon()

        #expect { try FileDigest.of(original.path, copyingTo: copy.path, direct: direct, urgency: urgency) } throws: {
            ($0 as? FileDigestError)?.code == ECANCELED
        }
        let left = try FileManager.default.attributesOfItem(atPath: copy.path)[.size] as? Int ?? -1
        #expect(left >= 0 && left <= 1 << 20)
    }

    /// Which of the first `size` bytes' pages of `path` are in the page cache (mincore).
    static func residentPages(_ path: String, size: Int) throws -> [Bool] {
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        let mapped = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0)
        try #require(mapped != MAP_FAILED && mapped != nil)
        defer { munmap(mapped, size) }
        var pages = [UInt8](repeating: 0, count: (size + 4095) / 4096)
        try #require(mincore(mapped, size, &pages) == 0)
        return pages.map { $0 & 1 != 0 }
    }

    @Test func aCopyNeverReplacesAFile() throws {
        let folder = try Scratch.folder("galley-filedigest")
        let original = folder.appending(path: "original.zip")
        try Data("zip".utf8).write(to: original)
        let copy = folder.appending(path: "copy.zip")
        try Data("kept".utf8).write(to: copy)
        #expect(throws: FileDigestError.self) { try FileDigest.of(original.path, copyingTo: copy.path) }
        #expect(try Data(contentsOf: copy) == Data("kept".utf8))
    }
}
