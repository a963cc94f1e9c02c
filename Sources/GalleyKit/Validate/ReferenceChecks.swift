import Foundation

/// The files a zip holds, as the references and media checks need them.
struct ZipContents {
    /// The top folder (`<apple_id>`).
    var top: String
    /// Names relative to the top folder → entry facts.
    var files: [String: FileFacts]

    struct FileFacts {
        var size: UInt64
        /// What the first bytes say, when the full check read them (the bytes are not kept).
        var sniffed: Sniffed?
    }

    struct Sniffed {
        var format: MediaFormat?
        var pixelSize: PixelSize?

        init(_ head: [UInt8]) {
            format = MediaFormat.sniff(head)
            pixelSize = format.flatMap { MediaChecks.dimensions(head, $0) }
        }
    }
}

/// References between latest.json, the zip's files and the bodies' placeholders
/// (wire format §1.2, §3).
struct ReferenceChecks {
    let manifestPath: String

    /// Files: every path an asset names, and every file no asset names.
    func run(_ index: ManifestIndex, contents: ZipContents?, into findings: inout Findings) {
        var referenced = Set<String>()
        for asset in index.assets {
            for (key, value) in [("file_name", asset.fileName), ("crop_350_350", asset.crop)] {
                guard let value, !value.isEmpty else { continue }
                let location = SourceLocation(path: manifestPath, line: asset.line, jsonPath: "\(asset.jsonPath).\(key)")
                if let problem = Self.pathProblem(value) {
                    findings.add("ref.path-unsafe", "`\(value)` \(problem): Dumpling would read or delete a file outside the issue folder",
                                 at: location, hint: "Use a path relative to the issue folder, without `..`.")
                    continue
                }
                referenced.insert(value)
                if let contents, contents.files[value] == nil {
                    findings.add("ref.file-missing", "\(key) `\(value)` is not in the zip", at: location,
                                 hint: "Add the file under `\(contents.top)/`, or fix the name (names are case-sensitive).")
                }
            }
            for variant in asset.variants where !variant.isEmpty {
                referenced.insert(variant)
                if let contents, contents.files[variant] == nil, Self.pathProblem(variant) == nil {
                    findings.add("ref.file-missing", "the device variant `\(variant)` is not in the zip",
                                 at: SourceLocation(path: manifestPath, line: asset.line, jsonPath: asset.jsonPath),
                                 hint: "Add the file, or drop the variant.")
                }
            }
        }
        if let contents {
            for name in contents.files.keys.sorted() where name != "latest.json" && !referenced.contains(name) && !name.hasSuffix("/") {
                findings.add("ref.unreferenced-file", "`\(name)` is in the zip but no asset refers to it",
                             at: SourceLocation(path: manifestPath.replacingOccurrences(of: "latest.json", with: name)),
                             hint: "Remove it to make the zip smaller, or add it as an asset.")
            }
        }
    }

    /// Placeholder spelling and placement in one article's body; ids are resolved in
    /// `resolvePlaceholders`, once every asset is known.
    func placeholders(
        in body: String, article articleIndex: Int, articlePath: String, line: Int, _ index: inout ManifestIndex,
        into findings: inout Findings
    ) {
        let location = SourceLocation(path: manifestPath, line: line, jsonPath: "\(articlePath).body")
        let matches = Placeholder.scan(body)
        var lines: [Int: Int] = [:]
        for match in matches {
            let here = "line \(match.line), column \(match.column) of the body"
            lines[match.line, default: 0] += 1
            if !match.isExact {
                findings.add("ref.placeholder-malformed", "the placeholder `\(match.text)` at \(here) is not spelled the way Dumpling reads it",
                             at: location, hint: "Write it exactly as `\(Placeholder.text(for: match.key))`.")
            }
            index.placeholders.append(ManifestIndex.PlaceholderRef(key: match.key, article: articleIndex, where_: here, location: location))
        }
        for (lineNumber, count) in lines.sorted(by: { $0.key < $1.key }) where count > 1 {
            findings.add("ref.placeholder-same-line", "line \(lineNumber) of the body holds \(count) placeholders: Dumpling's greedy pattern reads them as one unknown id",
                         at: location, hint: "Put every placeholder on its own line.")
        }
        if body.utf8.contains(13) {
            findings.add("ref.line-endings", "the body has CR line endings, which shorten Dumpling's placeholder search window",
                         at: location, hint: "Use LF line endings only.")
        }
        // Dumpling searches body.characters.count UTF-16 units: placeholders past that are not found.
        let window = body.count
        if body.utf16.count > window, let last = matches.last(where: \.isExact) {
            let endUTF16 = String(decoding: Array(body.utf8)[..<last.utf8Range.upperBound], as: UTF8.self).utf16.count
            if endUTF16 > window {
                findings.add("ref.placeholder-window", "the placeholder `\(last.key)` ends past Dumpling's search window (\(window) of \(body.utf16.count) UTF-16 units), so apps never replace it",
                             at: location, hint: "Append at least \(body.utf16.count - window) spaces after the last placeholder (galley pack does).")
            }
        }
    }

    func resolvePlaceholders(_ index: ManifestIndex, into findings: inout Findings) {
        var owner: [String: Int?] = [:]
        for asset in index.assets where !asset.id.isEmpty { owner[asset.id] = asset.article }
        for placeholder in index.placeholders {
            switch owner[placeholder.key] {
            case nil:
                findings.add("ref.placeholder-unknown", "the placeholder at \(placeholder.where_) names `\(placeholder.key)`, which no asset has",
                             at: placeholder.location, hint: "Use the id of one of the article's assets.")
            case .some(let assetArticle) where assetArticle != placeholder.article:
                findings.add("ref.placeholder-foreign", "the placeholder at \(placeholder.where_) names `\(placeholder.key)`, an asset of \(assetArticle.map { "article \($0 + 1)" } ?? "the issue")",
                             at: placeholder.location,
                             hint: "Dumpling finds it anyway, but importers that scope ids per article do not: list the asset under this article.")
            default: break
            }
        }
    }

    /// What makes a referenced path unsafe, if anything.
    static func pathProblem(_ value: String) -> String? {
        if value.hasPrefix("/") { return "is absolute" }
        if value.contains("\\") { return "contains a backslash" }
        if value.split(separator: "/", omittingEmptySubsequences: false).contains("..") { return "contains `..`" }
        if value.unicodeScalars.contains(where: { $0.value < 0x20 }) { return "contains a control character" }
        return nil
    }
}

/// Media files: content against extension and list, emptiness, dimensions (needs the full check's heads).
struct MediaChecks {
    let zipPath: String

    func run(_ index: ManifestIndex, contents: ZipContents, into findings: inout Findings) {
        var checked = Set<String>()
        for asset in index.assets {
            for (key, name) in [("file_name", asset.fileName), ("crop_350_350", asset.crop)] {
                guard let name, let facts = contents.files[name] else { continue }
                let location = SourceLocation(path: "\(zipPath)!\(contents.top)/\(name)")
                if facts.size == 0 {
                    if checked.insert(name).inserted {
                        findings.add("media.empty", "`\(name)` is empty", at: location, hint: "Replace it with the real file.")
                    }
                    continue
                }
                guard let sniffed = facts.sniffed else { continue }
                guard let format = sniffed.format else {
                    if checked.insert(name).inserted {
                        findings.add("media.unknown", "`\(name)` is not an image, sound or video Galley recognises", at: location,
                                     hint: "Check that the file is what its name says.")
                    }
                    continue
                }
                let expected: MediaKind = key == "crop_350_350" && asset.list != "images" && format.kind == .image ? .image
                    : asset.list == "images" ? .image : asset.list == "sound_files" ? .sound : .video
                let acceptable = key == "crop_350_350" ? (format.kind == .image || format.kind == expected) : format.kind == expected
                if !acceptable {
                    findings.add("media.wrong-list", "`\(name)` is \(format.kind.rawValue) (\(format.mimeType)) but sits in `\(asset.list)`",
                                 at: SourceLocation(path: zipPath, jsonPath: "\(asset.jsonPath).\(key)"),
                                 hint: "Move the asset to `\(format.kind.manifestList)`, or replace the file.")
                }
                let ext = (name as NSString).pathExtension.lowercased()
                if checked.insert(name).inserted, !format.extensions.contains(ext) {
                    findings.add("media.extension", "`\(name)` holds \(format.mimeType) data, which its extension does not suggest",
                                 at: location, hint: "Rename it to `.\(format.extensions[0])`.")
                }
                if key == "file_name", let metadata = asset.metadata, let size = sniffed.pixelSize {
                    let width = metadata["width"].flatMap { Int(JSONValue($0).numberText ?? "") }
                    let height = metadata["height"].flatMap { Int(JSONValue($0).numberText ?? "") }
                    if let width, let height, width != size.width || height != size.height {
                        findings.add("media.dimensions", "`\(name)` is \(size.width)×\(size.height), but its metadata says \(width)×\(height)",
                                     at: SourceLocation(path: zipPath, jsonPath: "\(asset.jsonPath).metadata"),
                                     hint: "Correct width and height, or the layout will jump when the image loads.")
                    }
                }
            }
        }
    }

    static func dimensions(_ head: [UInt8], _ format: MediaFormat) -> PixelSize? {
        switch format {
        case .png: MediaProber.pngSize(head)
        case .gif: MediaProber.gifSize(head)
        case .webp: MediaProber.webpSize(head)
        default: nil
        }
    }
}

extension JSONValue {
    var numberText: String? {
        switch self {
        case .number(let n): n
        case .string(let s): s
        default: nil
        }
    }
}
