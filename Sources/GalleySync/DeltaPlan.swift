import Foundation
import GalleyFormats

/// How a new version of an issue zip is rebuilt from the version a reader holds: which byte
/// ranges of the new file are copies of the held file's entries, and which must be fetched.
///
/// A zip's central directory names every entry with its CRC-32, sizes, method and offset.
/// An entry of the new zip whose name, CRC-32, sizes, method and flags are the held entry's,
/// and whose span (local header, data, descriptor: from its offset to the next entry's) has
/// the held span's length, is taken to be the same bytes; Galley's packs are reproducible (one
/// entry time, fixed modes), so an unchanged article's entries are. The rest is fetched with
/// ranged requests. The feed's whole-file SHA-256 proves the result, so a wrong guess costs a
/// whole download, never a wrong issue.
struct DeltaPlan: Equatable {
    /// `length` bytes at `from` in the held zip, written at `to` in the new one.
    struct Copy: Equatable {
        var from: UInt64
        var to: UInt64
        var length: UInt64
    }

    var copies: [Copy]
    /// Ranges of the new zip to fetch, in order, one request each.
    var fetches: [Range<UInt64>]

    var reused: UInt64 { copies.reduce(0) { $0 + $1.length } }
    var fetched: UInt64 { fetches.reduce(0) { $0 + UInt64($1.count) } }

    /// Why a new zip's directory cannot be used to place its entries (a lying server's): the
    /// sync downloads the whole file instead.
    struct Unusable: Error, CustomStringConvertible {
        var description: String
    }

    private enum Segment {
        case copy(Copy)
        case fetch(Range<UInt64>)

        var range: Range<UInt64> {
            switch self {
            case .copy(let copy): copy.to..<(copy.to + copy.length)
            case .fetch(let range): range
            }
        }
    }

    /// Matches `new`'s entries against `held`'s. `known` is what was already fetched of the new
    /// file (its end: the central directory and the end record), which needs no request.
    /// Fetches closer than `gap` bytes are one request, and there are at most `maxRequests` (a
    /// CDN or an object store answers one range per request, and each costs a round trip).
    static func make(held: ZipDirectory, new: ZipDirectory, known: Range<UInt64>,
                     gap: UInt64 = 64 << 10, maxRequests: Int = 32) throws -> DeltaPlan {
        let end = new.centralDirectoryOffset
        guard end <= new.fileSize, known.upperBound == new.fileSize, known.lowerBound <= end else {
            throw Unusable(description: "its central directory is not where its end record says")
        }
        struct Key: Hashable {
            var name: [UInt8]
            var crc32: UInt32
            var compressedSize: UInt64
            var uncompressedSize: UInt64
            var method: UInt16
            var flags: UInt16
        }
        func key(_ entry: ZipDirectory.Entry) -> Key {
            Key(name: entry.rawName, crc32: entry.crc32, compressedSize: entry.compressedSize,
                uncompressedSize: entry.uncompressedSize, method: entry.method, flags: entry.flags)
        }
        // The held zip is the store's own, checked when it was imported: its spans are read
        // from its local headers.
        var spans: [Key: (offset: UInt64, length: UInt64)] = [:]
        for entry in held.entries {
            guard let header = entry.localHeaderLength else { continue }
            let length = header + entry.compressedSize + entry.descriptorLength
            guard entry.localHeaderOffset + length <= held.centralDirectoryOffset else { continue }
            spans[key(entry)] = (entry.localHeaderOffset, length)
        }

        let entries = new.entries.sorted { $0.localHeaderOffset < $1.localHeaderOffset }
        var segments: [Segment] = []
        var reached: UInt64 = 0
        for (index, entry) in entries.enumerated() {
            let start = entry.localHeaderOffset
            let next = index + 1 < entries.count ? entries[index + 1].localHeaderOffset : end
            guard start >= reached, start < next, next <= end else {
                throw Unusable(description: "its central directory places entries outside the file or over each other")
            }
            if start > reached { segments.append(.fetch(reached..<start)) }
            if let span = spans[key(entry)], span.length == next - start {
                segments.append(.copy(Copy(from: span.offset, to: start, length: span.length)))
            } else {
                segments.append(.fetch(start..<next))
            }
            reached = next
        }
        if reached < end { segments.append(.fetch(reached..<end)) }

        // What is already known needs no request; a copy reaching into it is fetched with it.
        segments = segments.compactMap { segment in
            let range = segment.range
            if range.lowerBound >= known.lowerBound { return nil }
            if range.upperBound > known.lowerBound { return .fetch(range.lowerBound..<known.lowerBound) }
            return segment
        }
        // Small copies between two fetches are fetched with them; then the smallest until the
        // requests are few enough.
        func merged(_ segments: [Segment]) -> [Segment] {
            var out: [Segment] = []
            for segment in segments {
                if case .fetch(let range) = segment, case .fetch(let last)? = out.last, last.upperBound == range.lowerBound {
                    out[out.count - 1] = .fetch(last.lowerBound..<range.upperBound)
                } else {
                    out.append(segment)
                }
            }
            return out
        }
        func bridged(_ segments: [Segment], where small: (UInt64) -> Bool) -> [Segment] {
            var out = segments
            for index in out.indices.dropFirst().dropLast() {
                if case .copy(let copy) = out[index], case .fetch = out[index - 1], case .fetch = out[index + 1], small(copy.length) {
                    out[index] = .fetch(out[index].range)
                }
            }
            return merged(out)
        }
        segments = bridged(merged(segments)) { $0 < gap }
        while segments.filter({ if case .fetch = $0 { true } else { false } }).count > maxRequests {
            let between = segments.indices.dropFirst().dropLast().compactMap { index -> UInt64? in
                guard case .copy(let copy) = segments[index], case .fetch = segments[index - 1], case .fetch = segments[index + 1] else { return nil }
                return copy.length
            }
            guard let smallest = between.min() else { break }
            segments = bridged(segments) { $0 <= smallest }
        }
        var plan = DeltaPlan(copies: [], fetches: [])
        for segment in segments {
            switch segment {
            case .copy(let copy): plan.copies.append(copy)
            case .fetch(let range): plan.fetches.append(range)
            }
        }
        return plan
    }
}
