import Foundation
import Testing
import GalleyTestSupport

/// Square thumbnails (issue 11, point 5): pack makes a real 350x350 JPEG `crop_350_350` for
/// every picture with libvips, the same bytes every run; the source's own thumbnail wins; a
/// video's poster is cropped; the preview index shows them.
@Suite struct ThumbnailTests {
    /// Packs `source` and unpacks the zip: the issue folder and its latest.json.
    func packAndUnpack(_ source: URL, _ extra: [String] = []) throws -> (folder: URL, manifest: [String: Any], zip: URL) {
        let out = try Harness.temporaryDirectory()
        let packed = try Harness.galley(["pack", source.path, "-o", out.path + "/"] + extra)
        #expect(packed.status == 0, "\(packed.stderr)")
        let zip = try #require(try FileManager.default.contentsOfDirectory(atPath: out.path).first { $0.hasSuffix(".zip") })
        let unpacked = out.appending(path: "unpacked")
        #expect(try Harness.tool("unzip", ["-q", out.appending(path: zip).path, "-d", unpacked.path]).status == 0)
        let top = try #require(try FileManager.default.contentsOfDirectory(atPath: unpacked.path).first)
        let folder = unpacked.appending(path: top)
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appending(path: "latest.json")))
        return (folder, try #require(manifest as? [String: Any]), out.appending(path: zip))
    }

    static func assets(_ manifest: [String: Any]) -> [[String: Any]] {
        func ordered(_ object: [String: Any], _ key: String) -> [[String: Any]] {
            ((object[key] as? [String: Any])?["ordered"] as? [[String: Any]]) ?? []
        }
        let articles = manifest["articles"] as? [[String: Any]] ?? []
        return ordered(manifest, "images") + articles.flatMap { ordered($0, "images") + ordered($0, "sound_files") + ordered($0, "videos") }
    }

    /// A JPEG's frame size and whether it is baseline, from its SOF marker.
    static func jpegSize(_ data: Data) -> (width: Int, height: Int)? {
        let bytes = [UInt8](data)
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var i = 2
        while i + 9 < bytes.count, bytes[i] == 0xFF {
            let marker = bytes[i + 1]
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            if marker == 0xC0 || marker == 0xC2 {
                return (Int(bytes[i + 7]) << 8 | Int(bytes[i + 8]), Int(bytes[i + 5]) << 8 | Int(bytes[i + 6]))
            }
            i += 2 + length
        }
        return nil
    }

    @Test func everyPictureGetsARealSquareThumbnailAndTheSourcesOwnWins() throws {
        let (folder, manifest, _) = try packAndUnpack(Harness.example)
        var made = 0
        for asset in Self.assets(manifest) {
            let file = try #require(asset["file_name"] as? String)
            let crop = try #require(asset["crop_350_350"] as? String)
            #expect(FileManager.default.fileExists(atPath: folder.appending(path: crop).path), "\(crop)")
            switch file {
            case "cover.jpg": #expect(crop == "cover-350x350.jpg", "the source's thumbnail wins")
            case "night-ferry-interview.mp3": #expect(crop == "night-ferry-interview-thumb.jpg")
            case "harbour-in-motion-harbour.mp4": #expect(crop == "harbour-in-motion-harbour-poster.jpg")
            default:
                #expect(crop == (file as NSString).deletingPathExtension + "-350x350.jpg")
                let size = Self.jpegSize(try Data(contentsOf: folder.appending(path: crop)))
                #expect(size?.width == 350 && size?.height == 350, "\(crop): \(String(describing: size))")
                made += 1
            }
        }
        #expect(made == 5)
    }

    @Test func thumbnailsAreTheSameBytesEveryRunAndTheCropModeCounts() throws {
        let first = try packAndUnpack(Harness.example)
        let second = try packAndUnpack(Harness.example)
        #expect(try Data(contentsOf: first.zip) == Data(contentsOf: second.zip))
        let name = "the-lighthouse-keepers-lamp-room-350x350.jpg"
        let centre = try packAndUnpack(Harness.example, ["--thumbnails", "centre"])
        #expect(try Data(contentsOf: centre.folder.appending(path: name)) != Data(contentsOf: first.folder.appending(path: name)),
                "a 640x427 picture cut around its most interesting part differs from its middle")
        let none = try packAndUnpack(Harness.example, ["--thumbnails", "none"])
        for asset in Self.assets(none.manifest) where (asset["file_name"] as? String) == "the-lighthouse-keepers-lamp-room.jpg" {
            #expect(asset["crop_350_350"] as? String == "the-lighthouse-keepers-lamp-room.jpg")
        }
        #expect(!FileManager.default.fileExists(atPath: none.folder.appending(path: name).path))
    }

    /// An issue with one article whose folder holds `files`.
    func source(article: String, files: [String: Data]) throws -> URL {
        let root = try Harness.temporaryDirectory().appending(path: "issue")
        let folder = root.appending(path: "articles/01-first")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("title: T\napple_id: org.example.fixture\npublish_date: 2020-03-01\n".utf8).write(to: root.appending(path: "issue.yaml"))
        try Data(article.utf8).write(to: folder.appending(path: "article.md"))
        for (name, data) in files { try data.write(to: folder.appending(path: name)) }
        return root
    }

    static let mp4 = Data([0, 0, 0, 0x18] + Array("ftypmp42".utf8) + [0, 0, 0, 0] + Array("mp42isom".utf8))
    static func picture() throws -> Data {
        try Data(contentsOf: Harness.example.appending(path: "articles/01-the-lighthouse-keepers/lamp-room.jpg"))
    }

    @Test func aVideosPosterIsCroppedAndAnAudioArticlesPictureIsOnTheIndex() throws {
        let root = try source(
            article: "---\ntitle: Clip\nassets:\n  - file: clip.mp4\n    poster: still.jpg\n---\n<!-- [ASSET: clip.mp4] -->\n",
            files: ["clip.mp4": Self.mp4, "still.jpg": try Self.picture()])
        let (folder, manifest, _) = try packAndUnpack(root)
        let video = try #require(Self.assets(manifest).first)
        #expect(video["crop_350_350"] as? String == "first-still-350x350.jpg")
        #expect(Self.jpegSize(try Data(contentsOf: folder.appending(path: "first-still-350x350.jpg")))?.width == 350)

        let audio = try source(
            article: "---\ntitle: Talk\ntype: audio\nassets:\n  - file: talk.mp3\n    thumbnail: speaker.jpg\n---\n<!-- [ASSET: talk.mp3] -->\n",
            files: ["talk.mp3": Data([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0, 0xFF, 0xFB, 0x90, 0] + [UInt8](repeating: 0, count: 400)),
                    "speaker.jpg": try Self.picture()])
        let site = try Harness.temporaryDirectory().appending(path: "site")
        let rendered = try Harness.galley(["render", audio.path, "--output", site.path])
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let index = try String(contentsOf: site.appending(path: "index.html"), encoding: .utf8)
        #expect(index.contains("<img src=\"assets/first-speaker.jpg\""), "\(index)")
    }

    /// HEIC and AVIF pictures (libvips's HEIF module) get thumbnails, and that module is the
    /// only one of libvips's that galley loads: the others (ImageMagick's, PDF, OpenSlide, JPEG
    /// XL) read nothing Galley hands libvips and cost 4.6 MB of a thumbnailing pack. The
    /// loader's own record (glibc's `LD_DEBUG=files`) names every library the process opened.
    @Test func heifAndAVIFPicturesGetThumbnailsAndNoOtherLibvipsModuleIsLoaded() throws {
        let media = Harness.fixtures.appending(path: "media")
        let root = try source(
            article: "---\ntitle: Formats\n---\nText.\n\n![One](photo.heic)\n\n![Two](photo.avif)\n\n![Three](lamp.jpg)\n",
            files: ["photo.heic": try Data(contentsOf: media.appending(path: "photo.heic")),
                    "photo.avif": try Data(contentsOf: media.appending(path: "photo.avif")),
                    "lamp.jpg": try Self.picture()])
        let (packed, loaded, out) = try packRecordingLibraries(root)
        #expect(packed.status == 0, "\(packed.stderr)")
        #expect(Harness.diagnosticIDs(packed).isEmpty, "\(packed.stdout)")
        try expectSquareThumbnails(packedInto: out, count: 3)
        #expect(loaded.contains("vips-heif.so"), "the HEIF module is loaded")
        for module in ["vips-magick.so", "vips-poppler.so", "vips-openslide.so", "vips-jxl.so", "libMagickCore"] {
            #expect(!loaded.contains(module), "\(module) is not loaded")
        }
    }

    /// Unzips the fixture issue packed into `out`: its `count` assets each have a 350x350
    /// thumbnail of their own.
    func expectSquareThumbnails(packedInto out: URL, count: Int) throws {
        let unpacked = out.appending(path: "unpacked")
        #expect(try Harness.tool("unzip", ["-q", out.appending(path: "org.example.fixture.zip").path, "-d", unpacked.path]).status == 0)
        let folder = unpacked.appending(path: "org.example.fixture")
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appending(path: "latest.json")))
        let assets = Self.assets(try #require(manifest as? [String: Any]))
        #expect(assets.count == count)
        for asset in assets {
            let crop = try #require(asset["crop_350_350"] as? String)
            #expect(crop != asset["file_name"] as? String, "\(asset)")
            let size = Self.jpegSize(try Data(contentsOf: folder.appending(path: crop)))
            #expect(size?.width == 350 && size?.height == 350, "\(crop): \(String(describing: size))")
        }
    }

    /// The libraries a pack opened, from glibc's loader record (`LD_DEBUG=files`; its file is
    /// named with the process id after `loaded`).
    func packRecordingLibraries(_ root: URL) throws -> (result: Harness.Result, loaded: String, out: URL) {
        let out = try Harness.temporaryDirectory()
        let record = out.appending(path: "loaded")
        let packed = try Harness.galley(["pack", root.path, "-o", out.path + "/", "--json"],
                                        environment: ["LD_DEBUG": "files", "LD_DEBUG_OUTPUT": record.path])
        let logs = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasPrefix("loaded") }
        let loaded = try logs.map { try String(contentsOf: out.appending(path: $0), encoding: .utf8) }.joined()
        return (packed, loaded, out)
    }

    /// libvips's HEIF module is loaded only once a HEIC or AVIF picture comes: the module and
    /// libheif's codecs are 2.1 MB of resident pages that an issue of JPEG and PNG pictures
    /// never uses. Among JPEGs whose thumbnails are made on every core, a HEIC picture in a
    /// middle article loads it with no other thumbnail under way, and every picture, that one
    /// included, gets its thumbnail with no finding.
    @Test func theHEIFModuleIsLoadedOnlyWhenAHEIFPictureComes() throws {
        let example = try packRecordingLibraries(Harness.example)
        #expect(example.result.status == 0, "\(example.result.stderr)")
        #expect(example.loaded.contains("libvips.so"), "the example's pictures get thumbnails from libvips")
        #expect(!example.loaded.contains("vips-heif.so") && !example.loaded.contains("libheif"), "no HEIF module for JPEG and PNG")

        let root = try Harness.temporaryDirectory().appending(path: "issue")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try Data("title: T\napple_id: org.example.fixture\npublish_date: 2020-03-01\n".utf8).write(to: root.appending(path: "issue.yaml"))
        let jpeg = try Self.picture()
        let heic = try Data(contentsOf: Harness.fixtures.appending(path: "media/photo.heic"))
        for index in 1...12 {
            let folder = root.appending(path: String(format: "articles/%02d-article-%d", index, index))
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var files = ["a.jpg": jpeg, "b.jpg": jpeg]
            if index == 7 { files["c.heic"] = heic }
            let article = "---\ntitle: Article \(index)\nassets: [\(files.keys.sorted().joined(separator: ", "))]\n---\nText.\n"
            try Data(article.utf8).write(to: folder.appending(path: "article.md"))
            for (name, data) in files { try data.write(to: folder.appending(path: name)) }
        }
        let mixed = try packRecordingLibraries(root)
        #expect(mixed.result.status == 0, "\(mixed.result.stderr)")
        #expect(Harness.diagnosticIDs(mixed.result).isEmpty, "\(mixed.result.stdout)")
        #expect(mixed.loaded.contains("vips-heif.so"), "the HEIF module is loaded for the HEIC picture")
        try expectSquareThumbnails(packedInto: mixed.out, count: 25)
    }

    @Test func aPictureTooLargeOrUndecodableKeepsItsOwnFileWithAWarning() throws {
        // A PNG header claiming 30,000 x 30,000 pixels: a decompression bomb's shape.
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8))
        png.append(contentsOf: [0, 0, 0x75, 0x30, 0, 0, 0x75, 0x30, 8, 2, 0, 0, 0, 0, 0, 0, 0])
        png.append(Data(count: 64))
        let root = try source(article: "---\ntitle: A\nassets: [huge.png]\n---\n<!-- [ASSET: huge.png] -->\n", files: ["huge.png": png])
        let out = try Harness.temporaryDirectory()
        let result = try Harness.galley(["pack", root.path, "-o", out.path, "--json"])
        #expect(result.status == 0)
        #expect(Harness.diagnosticIDs(result) == ["pack.thumbnail-failed"])
        #expect(result.stdout.contains("30000x30000 pixels, past the 200-megapixel limit"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["org.example.fixture.zip"],
                "the scratch folder of thumbnails is gone")
    }

    /// Pictures libvips cannot read at all: the text on standard error shows the first
    /// `findingsPerCheck` of the check and how many more there are; --verbose shows each, and
    /// --json's document lists each.
    @Test func aCheckFoundOnManyPicturesIsShownAFewTimesThenCounted() throws {
        let count = 25
        let names = (0..<count).map { "broken-\($0).png" }
        let article = "---\ntitle: A\nassets: [\(names.joined(separator: ", "))]\n---\n"
            + names.map { "<!-- [ASSET: \($0)] -->\n" }.joined()
        // A PNG signature and nothing a decoder can use.
        let broken = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 64))
        let root = try source(article: article, files: Dictionary(uniqueKeysWithValues: names.map { ($0, broken) }))
        func lines(_ text: String) -> [Substring] { text.split(separator: "\n").filter { $0.contains("pack.thumbnail-failed:") } }

        let plain = try Harness.galley(["pack", root.path, "-o", try Harness.temporaryDirectory().path])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(lines(plain.stderr).count == 20)
        #expect(plain.stderr.contains("note: 5 more pack.thumbnail-failed findings not shown (25 in all; --verbose shows them, --json lists them)"),
                "\(plain.stderr)")

        let verbose = try Harness.galley(["pack", root.path, "-o", try Harness.temporaryDirectory().path, "--verbose"])
        #expect(lines(verbose.stderr).count == count)
        #expect(!verbose.stderr.contains("more pack.thumbnail-failed"))

        let json = try Harness.galley(["pack", root.path, "-o", try Harness.temporaryDirectory().path, "--json"])
        #expect(Harness.diagnosticIDs(json).count == count, "\(json.stdout)")
    }

    /// Pictures libvips cannot decode, each for its own reason: each warning gives that
    /// picture's own words, the same run after run, as when it is packed alone. (libvips keeps
    /// one error buffer for the process; with thumbnails made on several threads, a failure
    /// read another picture's words, or none.)
    @Test func eachUndecodablePictureIsReportedWithItsOwnWordsEveryRun() throws {
        // A JPEG's start and then bytes that differ from file to file.
        var random = SeededGenerator(state: 0x9E37_79B9_7F4A_7C15)
        func noise(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        let head = LargeManifestImportTests.jpeg
        // One picture an article, in as many articles: pack makes the articles' thumbnails on
        // several threads at once (an article's own, one after the other).
        let count = 24
        let pictures = (0..<count).map { _ in Data(head + noise(4_096)) }
        func issue(_ numbers: [Int]) throws -> URL {
            let root = try Harness.temporaryDirectory().appending(path: "issue")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try Data("title: T\napple_id: org.example.fixture\npublish_date: 2020-03-01\n".utf8).write(to: root.appending(path: "issue.yaml"))
            for number in numbers {
                let folder = root.appending(path: "articles/\(Self.slug(number))")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try Data("---\ntitle: A\(number)\nassets: [broken-\(number).jpg]\n---\n<!-- [ASSET: broken-\(number).jpg] -->\n".utf8)
                    .write(to: folder.appending(path: "article.md"))
                try pictures[number].write(to: folder.appending(path: "broken-\(number).jpg"))
            }
            return root
        }
        /// Each picture's warning message, by its article's number.
        func messages(_ root: URL) throws -> [Int: String] {
            let result = try Harness.galley(["pack", root.path, "-o", try Harness.temporaryDirectory().path, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            var found: [Int: String] = [:]
            for warning in document["warnings"] as? [[String: Any]] ?? [] {
                let message = try #require(warning["message"] as? String)
                let number = try #require((0..<count).first { message.contains("`articles/\(Self.slug($0))/broken-\($0).jpg`") })
                found[number] = message
            }
            return found
        }
        let all = try issue(Array(0..<count))
        let first = try messages(all)
        #expect(first.count == count)
        #expect(Set(first.values).count > 1, "the pictures fail for different reasons")
        for run in 2...4 { #expect(try messages(all) == first, "the same words on run \(run)") }
        for number in [0, 7, 23] {
            #expect(try messages(issue([number]))[number] == first[number], "picture \(number) packed alone")
        }
    }

    static func slug(_ number: Int) -> String { String(format: "%02d-article-%d", number, number) }

    @Test func aPosterThatIsNotAPictureIsAnErrorWhereItIsListed() throws {
        let root = try source(
            article: "---\ntitle: Clip\nassets:\n  - file: clip.mp4\n    poster: talk.mp3\n---\n<!-- [ASSET: clip.mp4] -->\n",
            files: ["clip.mp4": Self.mp4, "talk.mp3": Data([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0, 0xFF, 0xFB, 0x90, 0] + [UInt8](repeating: 0, count: 400))])
        let result = try Harness.galley(["pack", root.path, "-o", try Harness.temporaryDirectory().path, "--json"])
        #expect(result.status == 1)
        #expect(Harness.diagnosticIDs(result) == ["source.thumbnail-kind"])
        #expect(result.stdout.contains("the poster `articles/01-first/talk.mp3` is a sound file, not an image"))
    }
}
