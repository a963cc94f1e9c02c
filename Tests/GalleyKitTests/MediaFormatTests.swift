import Foundation
import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit

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
        let probe = try #require(try MediaProber.probe(root.appending(path: path)))
        #expect(probe.format == format)
        if width > 0 {
            #expect(probe.pixelSize == PixelSize(width: width, height: height))
        } else {
            #expect(probe.pixelSize == nil)
        }
    }
}
