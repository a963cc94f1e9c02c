import Foundation
import GalleyCore
import GalleyFormats

/// The files a zip holds, as the references and media checks need them.
struct ZipContents {
    /// The top folder (`<apple_id>`).
    package var top: String
    /// Names relative to the top folder → entry facts. The names are slices of the central
    /// directory's own (no copy per entry: 60,000 strings at 30,000 articles).
    package var files: [Substring: FileFacts]
    /// What each SVG file the full check read would run, apart from `files`: one in thousands
    /// of files is an SVG, and a place in every file's facts cost each of them 40 bytes.
    package var svgs: [String: SVGInspection] = [:]

    struct FileFacts {
        package var size: UInt64
        /// What the first bytes say, when the full check read them (the bytes are not kept).
        var sniffed: Sniffed?
    }

    struct Sniffed {
        package var format: MediaFormat?
        package var pixelSize: PixelSize?

        package init(_ head: [UInt8]) {
            format = MediaFormat.sniff(head)
            pixelSize = format.flatMap { MediaChecks.dimensions(head, $0) }
        }
    }
}
