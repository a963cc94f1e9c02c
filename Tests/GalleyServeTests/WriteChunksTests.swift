import GalleyCore
@testable import GalleyServe
import HTTPTypes
import HummingbirdCore
import NIOCore
import NIOPosix
import Testing

/// `GalleyServer.writeChunks`, the loop that sends downloads and spooled answers a chunk at a
/// time: every byte of the range in order, and a file cut short while it is sent ends the
/// answer with an error that names the file, rather than looping or sending short.
@Suite struct WriteChunksTests {
    /// Keeps what is written.
    struct Collected: ResponseBodyWriter {
        var bytes: [UInt8] = []
        mutating func write(_ buffer: ByteBuffer) async throws { bytes += buffer.readableBytesView }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    static let limits = SendLimits(budget: ChunkBudget(), sendTimeout: .seconds(60))

    static let file: [UInt8] = (0..<(GalleyServer.chunkLength * 2 + 100)).map { UInt8(truncatingIfNeeded: $0 &* 31) }

    /// `available` bytes of `file` readable; a read past them is empty, as at a file's end.
    static func read(_ available: Int64) -> (Int64, Int64) async throws -> ByteBuffer {
        { offset, length in
            let end = min(offset + length, available)
            return ByteBuffer(bytes: end > offset ? Array(file[Int(offset)..<Int(end)]) : [])
        }
    }

    @Test func sendsTheRangeInOrder() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let size = Int64(Self.file.count)
        var whole: any ResponseBodyWriter = Collected()
        try await GalleyServer.writeChunks(0...(size - 1), of: "/store/a.zip", to: &whole, on: loop, limits: Self.limits, stalled: {}, read: Self.read(size))
        #expect((whole as? Collected)?.bytes == Self.file)
        var part: any ResponseBodyWriter = Collected()
        try await GalleyServer.writeChunks(10...(size - 11), of: "/store/a.zip", to: &part, on: loop, limits: Self.limits, stalled: {}, read: Self.read(size))
        #expect((part as? Collected)?.bytes == Array(Self.file[10..<Int(size - 10)]))
    }

    @Test func aFileCutShortEndsTheAnswerNamingIt() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let size = Int64(Self.file.count)
        var writer: any ResponseBodyWriter = Collected()
        let cut = GalleyServer.chunkLength + 5
        await #expect {
            try await GalleyServer.writeChunks(0...(size - 1), of: "/store/a.zip", to: &writer, on: loop, limits: Self.limits, stalled: {}, read: Self.read(cut))
        } throws: { error in
            guard let error = error as? GalleyError else { return false }
            return error.id == .storeFailed && error.path == "/store/a.zip"
                && error.message == "the file ended early, at byte \(cut) of \(size)" && error.hint != nil
        }
        #expect((writer as? Collected)?.bytes == Array(Self.file[0..<Int(cut)]), "what was read is sent, nothing more")
    }
}
