import AsyncHTTPClient
import Foundation
import GalleyCore
import GalleyFormats
import NIOCore
import NIOHTTP1

/// What one package's download cost (`sync --json`'s `downloads`, the `bytes` and `reused`
/// of `issueDownloadComplete`).
public struct DownloadCost: Sendable, Encodable {
    public var appleID: String
    /// Bytes that came over the network for it (a resumed download: since the cut).
    public var bytesFetched: Int64
    /// Bytes copied from the version the store held (a delta update).
    public var bytesReused: Int64
    /// Whether it was rebuilt from the held version (else it was downloaded whole).
    public var delta: Bool

    enum CodingKeys: String, CodingKey {
        case delta
        case appleID = "apple_id"
        case bytesFetched = "bytes_fetched"
        case bytesReused = "bytes_reused"
    }
}

extension FeedSyncer {
    /// What a delta cost, and the rebuilt file's digest.
    struct DeltaResult {
        var digest: FileDigest
        var fetched: Int64
        var reused: Int64
    }

    /// A delta that cannot be made or did not come out as the feed's file: the sync downloads
    /// the whole file instead (`deltaFallback`).
    struct DeltaUnavailable: Error {
        var reason: String
        /// Bytes it fetched before it stopped (counted in what the sync cost).
        var fetched: Int64 = 0
    }

    /// The rebuilt file while a delta writes it, beside the download's name; a killed sync's
    /// is removed by the next one, which starts the delta again.
    static let deltaSuffix = ".delta"

    /// The bytes read at the end of a zip to find its directory: the end record and the
    /// longest comment it may have.
    static let deltaTailLength: UInt64 = 22 + 65_535

    /// Rebuilds the feed's new package at `work` from `held` (the store's zip of the issue's
    /// current version) and ranged requests for the rest (`DeltaPlan`): the end of the file
    /// first (its central directory), then each range the held zip cannot give. Every ranged
    /// answer must be a 206 for exactly the range asked, under the validator the first one
    /// gave (`If-Range`); anything else, and a result that is not the feed's size and SHA-256,
    /// is `DeltaUnavailable`. `work` is removed on any failure.
    func deltaDownload(_ client: HTTPClient, _ package: Feed.Package, held: String, to work: String,
                       progress: (Int64, Int64) -> Void) async throws -> DeltaResult {
        guard let size = package.size, size > 0, let sha = package.sha256 else { throw DeltaUnavailable(reason: "the feed gives no size or SHA-256") }
        let fd = Glibc.open(work, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DeltaUnavailable(reason: "cannot write \(work): \(String(cString: strerror(errno)))") }
        var done = false
        defer {
            close(fd)
            if !done { unlink(work) }
        }
        guard ftruncate(fd, off_t(size)) == 0 else { throw DeltaUnavailable(reason: "cannot make room for \(work)") }

        var fetched: Int64 = 0
        do {
            let result = try await rebuild(client, package, held: held, fd: fd, work: work, fileSize: UInt64(size), sha: sha,
                                           fetched: &fetched, progress: progress)
            done = true
            return result
        } catch is CancellationError {
            throw CancellationError()
        } catch var unavailable as DeltaUnavailable {
            unavailable.fetched = fetched
            throw unavailable
        } catch {
            throw DeltaUnavailable(reason: "\(error)", fetched: fetched)
        }
    }

    private func rebuild(_ client: HTTPClient, _ package: Feed.Package, held: String, fd: Int32, work: String, fileSize: UInt64,
                         sha: String, fetched: inout Int64, progress: (Int64, Int64) -> Void) async throws -> DeltaResult {
        var validator: String?
        var planned: Int64 = Int64(min(Self.deltaTailLength, fileSize))
        func fetch(_ range: Range<UInt64>) async throws {
            fetched += try await fetchRange(client, package.url.absoluteString, range, size: fileSize, validator: &validator, into: fd) {
                progress(fetched + $0, planned)
            }
            progress(fetched, planned)
        }

        // The end record, then the directory when it starts before the bytes read.
        let tailStart = fileSize - min(Self.deltaTailLength, fileSize)
        try await fetch(tailStart..<fileSize)
        let tail = try readAll(fd, at: tailStart, count: Int(fileSize - tailStart))
        guard let directoryStart = Self.centralDirectoryOffset(tail, fileSize: fileSize) else {
            throw DeltaUnavailable(reason: "its end has no zip end record this delta can read")
        }
        if directoryStart < tailStart {
            planned += Int64(tailStart - directoryStart)
            try await fetch(directoryStart..<tailStart)
        }
        let known = min(directoryStart, tailStart)..<fileSize
        let plan: DeltaPlan
        do {
            let new = try ZipDirectory.read(path: work, maxEntries: ZipLimits.classic.maxEntries)
            let old = try ZipDirectory.read(path: held, maxEntries: ZipLimits.classic.maxEntries)
            plan = try DeltaPlan.make(held: old, new: new, known: known)
        } catch {
            throw DeltaUnavailable(reason: "its central directory cannot be matched against the held zip: \(error)")
        }
        planned += Int64(plan.fetched)

        let source = Glibc.open(held, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw DeltaUnavailable(reason: "cannot read the held zip \(held)") }
        defer { close(source) }
        for copy in plan.copies {
            let failure = copyRange(source, from: copy.from, fd, to: copy.to, count: copy.length)
            guard failure == 0 else { throw DeltaUnavailable(reason: "cannot copy from the held zip: \(String(cString: strerror(failure)))") }
        }
        for range in plan.fetches { try await fetch(range) }

        let digest = try FileDigest.of(work)
        guard digest.size == Int64(fileSize), digest.sha256 == sha else {
            throw DeltaUnavailable(reason: "the rebuilt file is not the feed's (SHA-256 \(digest.sha256))")
        }
        return DeltaResult(digest: digest, fetched: fetched, reused: Int64(plan.reused))
    }

    /// One ranged GET, written at the range's place in `fd`; returns the bytes received. The
    /// first answer's validator (a strong ETag, else Last-Modified) is kept in `validator` and
    /// sent as `If-Range` with the next ones, so a file replaced meanwhile answers 200 and the
    /// delta stops.
    private func fetchRange(_ client: HTTPClient, _ address: String, _ range: Range<UInt64>, size: UInt64,
                            validator: inout String?, into fd: Int32, progress: (Int64) -> Void) async throws -> Int64 {
        var request = HTTPClientRequest(url: address)
        request.headers.add(name: "Range", value: "bytes=\(range.lowerBound)-\(range.upperBound - 1)")
        if let validator { request.headers.add(name: "If-Range", value: validator) }
        let response: HTTPClientResponse
        do {
            response = try await send(client, request, address)
        } catch let transient as Transient {
            throw DeltaUnavailable(reason: transient.error.message)
        }
        guard response.status == .partialContent,
              response.headers.first(name: "Content-Range") == "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)" else {
            throw DeltaUnavailable(reason: "a ranged request for bytes \(range.lowerBound)-\(range.upperBound - 1) was answered "
                                   + "\(response.status.code) \(response.headers.first(name: "Content-Range") ?? "without Content-Range")")
        }
        if validator == nil { validator = Self.hostValidator(response.headers) }
        var position = range.lowerBound
        do {
            for try await chunk in response.body {
                guard position + UInt64(chunk.readableBytes) <= range.upperBound else {
                    throw DeltaUnavailable(reason: "a ranged answer is longer than the range")
                }
                let failure = chunk.withUnsafeReadableBytes { writeAll(fd, $0, at: Int64(position)) }
                guard failure == 0 else { throw DeltaUnavailable(reason: "cannot write the rebuilt file: \(String(cString: strerror(failure)))") }
                position += UInt64(chunk.readableBytes)
                progress(Int64(position - range.lowerBound))
            }
        } catch let error as DeltaUnavailable {
            throw error
        } catch {
            throw DeltaUnavailable(reason: "a ranged answer was cut: \(error)")
        }
        guard position == range.upperBound else { throw DeltaUnavailable(reason: "a ranged answer ended early") }
        return Int64(range.count)
    }

    /// The central directory's offset from the end record in `tail` (the file's last bytes),
    /// for a classic zip (a Zip64 one gives up: Galley's packs are classic).
    static func centralDirectoryOffset(_ tail: [UInt8], fileSize: UInt64) -> UInt64? {
        guard tail.count >= 22 else { return nil }
        var position = tail.count - 22
        while position >= 0 {
            if tail[position] == 0x50, tail[position + 1] == 0x4B, tail[position + 2] == 0x05, tail[position + 3] == 0x06 {
                let offset = UInt64(tail[position + 16]) | UInt64(tail[position + 17]) << 8 | UInt64(tail[position + 18]) << 16
                    | UInt64(tail[position + 19]) << 24
                guard offset != 0xFFFF_FFFF, offset < fileSize else { return nil }
                return offset
            }
            position -= 1
        }
        return nil
    }
}
