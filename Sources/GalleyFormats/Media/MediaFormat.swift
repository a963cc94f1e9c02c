import Foundation
import GalleyCore


/// A media format recognised from a file's first bytes, never from its name alone.
public enum MediaFormat: String, Sendable, Codable, CaseIterable {
    case jpeg, png, gif, webp, heif, avif, svg
    case mp3, aac, m4a, ogg, flac, wav
    case mp4, mov, webm

    public var kind: MediaKind {
        switch self {
        case .jpeg, .png, .gif, .webp, .heif, .avif, .svg: .image
        case .mp3, .aac, .m4a, .ogg, .flac, .wav: .sound
        case .mp4, .mov, .webm: .video
        }
    }

    /// Already compressed: deflating it again costs time and saves nothing, so it is stored.
    public var isCompressed: Bool {
        switch self {
        case .svg, .wav: false
        default: true
        }
    }

    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .heif: "image/heif"
        case .avif: "image/avif"
        case .svg: "image/svg+xml"
        case .mp3: "audio/mpeg"
        case .aac: "audio/aac"
        case .m4a: "audio/mp4"
        case .ogg: "audio/ogg"
        case .flac: "audio/flac"
        case .wav: "audio/wav"
        case .mp4: "video/mp4"
        case .mov: "video/quicktime"
        case .webm: "video/webm"
        }
    }

    /// File name extensions that are expected for this format (lowercase, no dot).
    public var extensions: [String] {
        switch self {
        case .jpeg: ["jpg", "jpeg", "jpe"]
        case .png: ["png"]
        case .gif: ["gif"]
        case .webp: ["webp"]
        case .heif: ["heic", "heif"]
        case .avif: ["avif"]
        case .svg: ["svg"]
        case .mp3: ["mp3"]
        case .aac: ["aac"]
        case .m4a: ["m4a", "m4b", "mp4"]
        case .ogg: ["ogg", "oga", "opus"]
        case .flac: ["flac"]
        case .wav: ["wav"]
        case .mp4: ["mp4", "m4v"]
        case .mov: ["mov", "qt"]
        case .webm: ["webm", "mkv"]
        }
    }

    /// How many leading bytes `sniff` wants to see.
    public static let sniffLength = 512

    /// Recognises a format from the first bytes of a file (`sniffLength` is enough).
    public static func sniff(_ b: [UInt8]) -> MediaFormat? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + prefix.count && Array(b[offset..<offset + prefix.count]) == prefix
        }
        func ascii(_ text: String, at offset: Int = 0) -> Bool { starts(Array(text.utf8), at: offset) }

        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if ascii("GIF87a") || ascii("GIF89a") { return .gif }
        if ascii("RIFF") && ascii("WEBP", at: 8) { return .webp }
        if ascii("RIFF") && ascii("WAVE", at: 8) { return .wav }
        if ascii("OggS") { return .ogg }
        if ascii("fLaC") { return .flac }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return .webm }
        if ascii("ftyp", at: 4), b.count >= 12 {
            let brand = String(decoding: b[8..<12], as: UTF8.self)
            switch brand {
            case "M4A ", "M4B ", "M4P ", "F4A ", "F4B ": return .m4a
            case "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1": return .heif
            case "avif", "avis": return .avif
            case "qt  ": return .mov
            default: return .mp4
            }
        }
        if ascii("ID3") { return .mp3 }
        if b.count >= 2, b[0] == 0xFF, b[1] & 0xE0 == 0xE0 {
            let layer = (b[1] >> 1) & 0x03
            if layer == 0 { return .aac }  // ADTS
            if layer == 1 { return .mp3 }  // MPEG layer III
        }
        if looksLikeSVG(b) { return .svg }
        return nil
    }

    private static func looksLikeSVG(_ bytes: [UInt8]) -> Bool {
        var text = String(decoding: bytes.prefix(sniffLength), as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        let trimmed = text.drop { $0.isWhitespace }
        guard trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<svg") || trimmed.hasPrefix("<!--")
            || trimmed.hasPrefix("<!DOCTYPE svg")
        else { return false }
        return text.contains("<svg")
    }
}

/// Pixel dimensions read from an image header, without decoding the image.
public struct PixelSize: Sendable, Hashable, Codable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// What a media file is: its format and, for images whose header says so cheaply, its size.
public struct MediaProbe: Sendable, Hashable {
    public var format: MediaFormat
    public var pixelSize: PixelSize?
    /// For SVG, what the whole file would run in a browser.
    public var svg: SVGInspection?
}

public enum MediaProber {
    /// Reads the first bytes of the file at `path` (and, for JPEG, hops from segment to
    /// segment) to tell its format and dimensions. Reads the whole file only for SVG, whose
    /// every element may carry script (in chunks, through `SVGScanner`).
    ///
    /// With `open` and `pread`, not a `FileHandle`: Foundation's `read(upToCount:)` asks `fstat`
    /// at every call and returns a new `Data`, and its `seek` is another call; a pack probes each
    /// of its pictures (30,000 at 30,000 articles), `serve` each file it sends. `O_NONBLOCK`: a
    /// FIFO in a source folder fails instead of waiting for a writer.
    public static func probe(path: String) throws -> MediaProbe? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        func read(_ offset: Int, _ count: Int) throws -> [UInt8] { try readAll(fd, at: UInt64(offset), count: count) }
        let head = try read(0, 4096)
        guard let format = MediaFormat.sniff(head) else { return nil }
        var size: PixelSize?
        switch format {
        case .png: size = pngSize(head)
        case .gif: size = gifSize(head)
        case .webp: size = webpSize(head)
        case .jpeg: size = try jpegSize(head: head, read: read)
        default: size = nil
        }
        let svg = format == .svg ? try SVGScanner.scan(fileAt: path) : nil
        return MediaProbe(format: format, pixelSize: size, svg: svg)
    }

    static func be16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) << 8 | Int(b[i + 1]) }
    static func be32(_ b: [UInt8], _ i: Int) -> Int { be16(b, i) << 16 | be16(b, i + 2) }
    static func le16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
    static func le24(_ b: [UInt8], _ i: Int) -> Int { le16(b, i) | Int(b[i + 2]) << 16 }

    package static func positive(_ w: Int, _ h: Int) -> PixelSize? {
        w > 0 && h > 0 ? PixelSize(width: w, height: h) : nil
    }

    package static func pngSize(_ b: [UInt8]) -> PixelSize? {
        guard b.count >= 24, String(decoding: b[12..<16], as: UTF8.self) == "IHDR" else { return nil }
        return positive(be32(b, 16), be32(b, 20))
    }

    package static func gifSize(_ b: [UInt8]) -> PixelSize? {
        guard b.count >= 10 else { return nil }
        return positive(le16(b, 6), le16(b, 8))
    }

    package static func webpSize(_ b: [UInt8]) -> PixelSize? {
        guard b.count >= 30 else { return nil }
        switch String(decoding: b[12..<16], as: UTF8.self) {
        case "VP8 ":
            return positive(le16(b, 26) & 0x3FFF, le16(b, 28) & 0x3FFF)
        case "VP8L":
            let bits = UInt32(b[21]) | UInt32(b[22]) << 8 | UInt32(b[23]) << 16 | UInt32(b[24]) << 24
            return positive(Int(bits & 0x3FFF) + 1, Int((bits >> 14) & 0x3FFF) + 1)
        case "VP8X":
            return positive(le24(b, 24) + 1, le24(b, 27) + 1)
        default:
            return nil
        }
    }

    /// Walks JPEG segments to the first start-of-frame marker, 4 to 9 bytes per hop: from the
    /// file's first bytes (`head`) while the hops stay in them (usually to the frame), then
    /// with `read(offset, count)`.
    static func jpegSize(head: [UInt8], read: (Int, Int) throws -> [UInt8]) rethrows -> PixelSize? {
        var offset = 2
        for _ in 0..<1024 {
            let marker = offset + 9 <= head.count ? Array(head[offset..<offset + 9]) : try read(offset, 9)
            guard marker.count >= 4, marker[0] == 0xFF else { return nil }
            let code = marker[1]
            if code == 0xFF {  // fill byte
                offset += 1
                continue
            }
            let length = be16(marker, 2)
            let isFrame = (0xC0...0xCF).contains(code) && code != 0xC4 && code != 0xC8 && code != 0xCC
            if isFrame {
                guard marker.count >= 9 else { return nil }
                return positive(be16(marker, 7), be16(marker, 5))
            }
            if code == 0xD9 || code == 0xDA || length < 2 { return nil }
            offset += 2 + length
        }
        return nil
    }
}
