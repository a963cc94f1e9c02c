import Foundation
import Testing
@testable import GalleyCore
@testable import GalleyFormats

@Suite struct MediaFormatTests {
    static func bytes(_ prefix: [UInt8], _ ascii: String = "") -> [UInt8] { prefix + Array(ascii.utf8) + [UInt8](repeating: 0, count: 64) }

    @Test(arguments: [
        (bytes([0xFF, 0xD8, 0xFF, 0xE0]), MediaFormat.jpeg),
        (bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), .png),
        (bytes([], "GIF89a"), .gif),
        (bytes([], "RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 "), .webp),
        (bytes([], "RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt "), .wav),
        (bytes([], "ID3\u{4}"), .mp3),
        (bytes([0xFF, 0xFB, 0x90, 0x00]), .mp3),
        (bytes([0xFF, 0xF1, 0x50, 0x80]), .aac),
        (bytes([0, 0, 0, 0x20], "ftypM4A "), .m4a),
        (bytes([0, 0, 0, 0x20], "ftypisom"), .mp4),
        (bytes([0, 0, 0, 0x14], "ftypqt  "), .mov),
        (bytes([0, 0, 0, 0x1C], "ftypheic"), .heif),
        (bytes([], "OggS"), .ogg),
        (bytes([0x1A, 0x45, 0xDF, 0xA3]), .webm),
        (bytes([], "<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"/>"), .svg),
    ])
    func sniffsFormatsFromContent(header: [UInt8], expected: MediaFormat) {
        #expect(MediaFormat.sniff(header) == expected)
    }

    @Test func textIsNoMedia() {
        #expect(MediaFormat.sniff(Array("this is not a picture\n".utf8)) == nil)
        #expect(MediaFormat.sniff([]) == nil)
    }

    /// A JPEG's frame found past the first bytes (an EXIF segment of 6,000 bytes before it), and
    /// one in them; a file that is not there, a folder and a FIFO are errors, never a wait.
    @Test func probesAJPEGWhoseFrameIsFarInAndRefusesWhatIsNoFile() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "galley-probe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func jpeg(exif: Int) -> [UInt8] {
            let app1 = [0xFF, 0xE1, UInt8((exif + 2) >> 8), UInt8((exif + 2) & 0xFF)] + [UInt8](repeating: 0x45, count: exif)
            // SOF0: length 17, precision 8, height 0x0123, width 0x0456, 3 components.
            let sof = [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01, 0x23, 0x04, 0x56, 0x03] + [UInt8](repeating: 0, count: 9)
            return [0xFF, 0xD8] + app1 + sof + [0xFF, 0xD9]
        }
        for exif in [6_000, 100] {
            let file = folder.appending(path: "photo-\(exif).jpg")
            try Data(jpeg(exif: exif)).write(to: file)
            let probe = try #require(try MediaProber.probe(path: file.path))
            #expect(probe.format == .jpeg && probe.pixelSize == PixelSize(width: 0x456, height: 0x123), "EXIF of \(exif) bytes")
        }
        #expect(throws: (any Error).self) { try MediaProber.probe(path: folder.appending(path: "missing.jpg").path) }
        #expect(throws: (any Error).self) { try MediaProber.probe(path: folder.path) }
        let fifo = folder.appending(path: "pipe.jpg")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        #expect(throws: (any Error).self, "refused at once") { try MediaProber.probe(path: fifo.path) }
    }

    @Test func compressedMediaIsStoredAndTheRestDeflated() {
        #expect(MediaFormat.jpeg.isCompressed && MediaFormat.mp4.isCompressed && MediaFormat.mp3.isCompressed)
        #expect(!MediaFormat.svg.isCompressed && !MediaFormat.wav.isCompressed)
    }

    @Test(arguments: [
        ("cover.jpg", MediaFormat.jpeg, 600, 800), ("masthead.png", .png, 480, 96),
        ("articles/03-harbour-in-motion/tide-chart.gif", .gif, 200, 120),
        ("articles/02-night-ferry/interview.mp3", .mp3, 0, 0),
        ("articles/03-harbour-in-motion/harbour.mp4", .mp4, 0, 0),
    ])
    func probesTheExampleMedia(path: String, format: MediaFormat, width: Int, height: Int) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Examples/winter-2026")
        let probe = try #require(try MediaProber.probe(path: root.appending(path: path).path))
        #expect(probe.format == format)
        if width > 0 {
            #expect(probe.pixelSize == PixelSize(width: width, height: height))
        } else {
            #expect(probe.pixelSize == nil)
        }
    }
}
