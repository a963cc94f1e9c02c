import Foundation
import GalleyCore
import GalleyFormats

/// Media files: content against extension and list, emptiness, dimensions (needs the full check's heads).
struct MediaChecks {
    let zipPath: String

    package func run(_ index: ManifestIndex, contents: ZipContents, into findings: inout Findings) {
        // The files whose own findings were made (each file once, however many assets name it),
        // by entry number: a set of names was 3.2 MB at 30,000 articles, an import's peak.
        var checked = [Bool](repeating: false, count: contents.entryCount)
        for asset in index.assets {
            for (key, name) in [("file_name", index.fileName(of: asset)), ("crop_350_350", index.crop(of: asset))] {
                guard let name, let number = contents.entryNumber(name) else { continue }
                let facts = contents.facts(number)
                // A file's facts are the same whichever asset names it: its own findings come once.
                let firstLook = !checked[number]
                checked[number] = true
                let location = SourceLocation(path: "\(zipPath)!\(contents.top)/\(name)")
                if facts.size == 0 {
                    if firstLook {
                        findings.add(.mediaEmpty, "`\(name)` is empty", at: location, hint: "Replace it with the real file.")
                    }
                    continue
                }
                guard let sniffed = facts.sniffed else { continue }
                guard let format = sniffed.format else {
                    if firstLook {
                        findings.add(.mediaUnknown, "`\(name)` is not an image, sound or video Galley recognises", at: location,
                                     hint: "Check that the file is what its name says.")
                    }
                    continue
                }
                let expected: MediaKind = key == "crop_350_350" && format.kind == .image ? .image : asset.kind
                let acceptable = key == "crop_350_350" ? (format.kind == .image || format.kind == expected) : format.kind == expected
                if !acceptable {
                    findings.add(.mediaWrongList, "`\(name)` is \(format.kind.rawValue) (\(format.mimeType)) but sits in `\(asset.list)`",
                                 at: SourceLocation(path: zipPath, jsonPath: "\(asset.jsonPath).\(key)"),
                                 hint: "Move the asset to `\(format.kind.manifestList)`, or replace the file.")
                }
                let ext = Self.pathExtension(name)
                if firstLook, !format.extensions.contains(ext) {
                    findings.add(.mediaExtension, "`\(name)` holds \(format.mimeType) data, which its extension does not suggest",
                                 at: location, hint: "Rename it to `.\(format.extensions[0])`.")
                }
                if key == "file_name", let size = sniffed.pixelSize {
                    let width = asset.declaredWidth
                    let height = asset.declaredHeight
                    if let width, let height, width != size.width || height != size.height {
                        findings.add(.mediaDimensions, "`\(name)` is \(size.width)×\(size.height), but its metadata says \(width)×\(height)",
                                     at: SourceLocation(path: zipPath, jsonPath: "\(asset.jsonPath).metadata"),
                                     hint: "Correct width and height, or the layout will jump when the image loads.")
                    }
                }
            }
        }
    }

    /// `run`, then `runSVG`: every media check on what a content pass saw, as an import's
    /// checks run them.
    func runAll(_ index: ManifestIndex, contents: ZipContents, into findings: inout Findings) {
        run(index, contents: contents, into: &findings)
        runSVG(contents: contents, into: &findings)
    }

    /// `runAll` on a second thread while `references` run on this one, each into findings of
    /// its own, for the caller to put in the order one thread made them (references first).
    /// Both only read the index and the contents; at 30,000 articles each took about 0.15 s
    /// after the content pass, one after the other, while the other core had nothing to do.
    func runAll(
        _ index: ManifestIndex, contents: ZipContents, beside references: ReferenceChecks, configuration: ValidationConfiguration
    ) -> (references: Findings, media: Findings) {
        @Sendable func media() -> Findings {
            var found = Findings(configuration: configuration)
            runAll(index, contents: contents, into: &found)
            return found
        }
        func referenceFindings() -> Findings {
            var found = Findings(configuration: configuration)
            references.run(index, contents: contents, into: &found)
            return found
        }
        let outcome = alongside(media, referenceFindings)
        // Neither side throws: `alongside` fails a side only if it never ran, which is then
        // run here rather than lose its findings.
        return ((try? outcome.body.get()) ?? referenceFindings(), (try? outcome.background.get()) ?? media())
    }

    /// SVG files anywhere in the zip (listed or not: a server hands out every file) that would
    /// run script when opened, and SVG files a browser cannot read.
    package func runSVG(contents: ZipContents, into findings: inout Findings) {
        for (name, svg) in contents.svgs.sorted(by: { $0.key < $1.key }) {
            findings.adopt(Self.svgFindings(svg, name: name, at: "\(zipPath)!\(contents.top)/\(name)"))
        }
    }

    /// What an SVG scan found, as findings on the file `name` located at `path`: for validate's
    /// zips and pack's sources alike.
    package static func svgFindings(_ svg: SVGInspection, name: String, at path: String) -> [Diagnostic] {
        var found: [Diagnostic] = []
        if let first = svg.activeContent.first {
            found.append(Diagnostic(
                .mediaSVGActive, "`\(name)` carries active content: \(svg.summary)", at: SourceLocation(path: path, line: first.line),
                hint: "Remove the script, event handlers (on…), javascript: links and foreign objects: an SVG opened by itself runs them. Export it again as a plain image (Inkscape: Save As › Optimized SVG; or run it through svgo)."))
        }
        if let malformed = svg.malformed {
            found.append(Diagnostic(
                .mediaSVGMalformed, "`\(name)` is not well-formed XML: \(malformed.what)", at: SourceLocation(path: path, line: malformed.line),
                hint: "Export the SVG again from its editor; browsers show an error instead of a broken SVG."))
        }
        return found
    }

    package static func dimensions(_ head: [UInt8], _ format: MediaFormat) -> PixelSize? {
        switch format {
        case .png: MediaProber.pngSize(head)
        case .gif: MediaProber.gifSize(head)
        case .webp: MediaProber.webpSize(head)
        default: nil
        }
    }
}

// MARK: Checks

extension MediaChecks {
    /// The checks on media files, in catalogue order.
    package static let checks: [Check] = [
        .mediaEmpty,
        .mediaUnknown,
        .mediaWrongList,
        .mediaExtension,
        .mediaDimensions,
        .mediaSVGActive,
        .mediaSVGMalformed,
    ]
}

extension Check {
    static let mediaEmpty = Check("media.empty", .media, .error, "A referenced media file is empty.",
            explanation: "It shows as a broken image or silent player.",
            triggering: [.fixture("zips/empty-media-error.zip")], clean: [.validZip])
    static let mediaUnknown = Check("media.unknown", .media, .warning, "A referenced file is no image, sound or video Galley recognises.",
            explanation: "Its first bytes match no known format: it may be damaged or mislabelled.",
            triggering: [.fixture("zips/unknown-media-warning.zip")], clean: [.validZip])
    static let mediaWrongList = Check("media.wrong-list", .media, .error, "A file sits in the wrong list (an MP3 under `images`).",
            explanation: "Dumpling renders `images` with `<img>` and `sound_files` with `<audio>`: the wrong list shows nothing.",
            triggering: [.fixture("zips/sound-in-images-error.zip")], clean: [.validZip])
    static let mediaExtension = Check("media.extension", .media, .warning, "A file's content does not match its extension.",
            explanation: "Servers and web views pick the type from the extension.",
            triggering: [.fixture("zips/png-named-jpg-warning.zip")], clean: [.validZip])
    static let mediaDimensions = Check("media.dimensions", .media, .warning, "An image's metadata width and height differ from its header.",
            explanation: "Layouts reserve the wrong space and jump when the image loads.",
            triggering: [.fixture("zips/wrong-dimensions-warning.zip")], clean: [.validZip])
    static let mediaSVGActive = Check("media.svg-active", .media, .error, "An SVG file carries script, event handlers, `javascript:` links or foreign objects.",
            explanation: "An SVG is a document, not only a picture: opened by itself (a link to it, a download, a web view) it runs its script with the site's rights. Pack, validate and import refuse it.",
            triggering: [.fixture("zips/svg-script-error.zip"), .fixture("zips/svg-onload-error.zip"), .fixture("zips/svg-javascript-entity-error.zip")],
            clean: [.validZip])
    static let mediaSVGMalformed = Check("media.svg-malformed", .media, .warning, "An SVG file is not well-formed XML.",
            explanation: "Browsers show an XML error in place of the picture (and libxml2 stops at entity bombs, reported here too).",
            triggering: [.fixture("zips/svg-malformed-warning.zip")], clean: [.validZip])
}

extension MediaChecks {
    /// `NSString.pathExtension`, lowercased, without bridging each of 60,000 names: what follows
    /// the last dot of the last path component, unless that dot starts the component.
    static func pathExtension(_ name: String) -> String {
        let file = name.utf8.lastIndex(of: UInt8(ascii: "/")).map { name.utf8[name.utf8.index(after: $0)...] } ?? name.utf8[...]
        guard let dot = file.lastIndex(of: UInt8(ascii: ".")), dot != file.startIndex else { return "" }
        return String(decoding: file[file.index(after: dot)...], as: UTF8.self).lowercased()
    }
}
