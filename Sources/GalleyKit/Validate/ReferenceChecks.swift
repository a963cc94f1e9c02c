import Foundation
import GalleyCore
import GalleyFormats


/// References between latest.json, the zip's files and the bodies' placeholders
/// (wire format §1.2, §3).
struct ReferenceChecks {
    let manifestPath: String

    /// Files: every path an asset names, and every file no asset names.
    package func run(_ index: ManifestIndex, contents: ZipContents?, into findings: inout Findings) {
        // Which of the zip's entries something refers to, by entry number: a bit of memory an
        // entry, where a set of the referenced names was the peak of a 30,000-article validate.
        var referenced = [Bool](repeating: false, count: contents?.entryCount ?? 0)
        /// Whether the zip has `name` (marking it referenced); `true` without a zip.
        func inZip(_ name: String) -> Bool {
            guard let contents else { return true }
            guard let number = contents.entryNumber(name) else { return false }
            referenced[number] = true
            return true
        }
        for asset in index.assets {
            for (key, value) in [("file_name", index.fileName(of: asset)), ("crop_350_350", index.crop(of: asset))] {
                guard let value, !value.isEmpty else { continue }
                let location = SourceLocation(path: manifestPath, line: asset.line, jsonPath: "\(asset.jsonPath).\(key)")
                if let problem = Self.pathProblem(value) {
                    findings.add(.refPathUnsafe, "`\(value)` \(problem): Dumpling would read or delete a file outside the issue folder",
                                 at: location, hint: "Use a path relative to the issue folder, without `..`.")
                    continue
                }
                if let contents, !inZip(value) {
                    findings.add(.refFileMissing, "\(key) `\(value)` is not in the zip", at: location,
                                 hint: "Add the file under `\(contents.top)/`, or fix the name (names are case-sensitive).")
                }
            }
            for variant in asset.variants where !variant.isEmpty {
                if contents != nil, !inZip(variant), Self.pathProblem(variant) == nil {
                    findings.add(.refFileMissing, "the device variant `\(variant)` is not in the zip",
                                 at: SourceLocation(path: manifestPath, line: asset.line, jsonPath: asset.jsonPath),
                                 hint: "Add the file, or drop the variant.")
                }
            }
        }
        for (path, reference) in index.bodyFiles.sorted(by: { $0.key < $1.key }) {
            if let contents, !inZip(path), Self.pathProblem(path) == nil {
                findings.add(.refBodyFileMissing, "`\(reference.what)` at \(reference.where_) names `\(path)`, which is not in the zip: the app shows a broken image or link",
                             at: reference.location,
                             hint: "Make the picture an asset and put its placeholder in the body (`galley pack` does this for `<img>` in a source folder), or add the file as `\(contents.top)/\(path)`.")
            }
        }
        if let contents {
            let unreferenced = contents.files.filter { !referenced[$0.number] }.map(\.name)
                .filter { $0 != "latest.json" && !$0.hasSuffix("/") }.sorted()
            for name in unreferenced {
                findings.add(.refUnreferencedFile, "`\(name)` is in the zip but no asset refers to it",
                             at: SourceLocation(path: manifestPath.replacingOccurrences(of: "latest.json", with: name)),
                             hint: "Remove it to make the zip smaller, or add it as an asset.")
            }
        }
    }

    /// Placeholder spelling and placement in one article's body. A placeholder naming one of
    /// the article's own assets (`ownAssetIDs`) is resolved here and forgotten; only the others
    /// (unknown ids, or another article's asset) wait in the index for `resolvePlaceholders`,
    /// once every asset is known. Keeping every placeholder until then was 14 MB of a
    /// 30,000-article validate, for what is nearly always resolved within its article.
    package func placeholders(
        in body: String, article articleIndex: Int, articlePath: String, line: Int, ownAssetIDs: Set<GlobalID.Key>,
        _ index: inout ManifestIndex, into findings: inout Findings
    ) {
        let location = SourceLocation(path: manifestPath, line: line, jsonPath: "\(articlePath).body")
        for reference in LocalReferences.scan(body) where index.bodyFiles[reference.path] == nil {
            index.bodyFiles[reference.path] = ManifestIndex.BodyFileRef(
                what: "<\(reference.element) \(reference.attribute)>",
                where_: "line \(reference.line), column \(reference.column) of the body", location: location)
        }
        let matches = Placeholder.scan(body)
        var lines: [Int: Int] = [:]
        for match in matches {
            let here = "line \(match.line), column \(match.column) of the body"
            lines[match.line, default: 0] += 1
            if !match.isExact {
                findings.add(.refPlaceholderMalformed, "the placeholder `\(match.text)` at \(here) is not spelled the way Dumpling reads it",
                             at: location, hint: "Write it exactly as `\(Placeholder.text(for: match.key))`.")
            }
            if ownAssetIDs.contains(GlobalID.Key(match.key)) { continue }
            index.placeholders.append(ManifestIndex.PlaceholderRef(
                key: match.key, article: articleIndex, articleLine: Int32(clamping: line),
                line: Int32(clamping: match.line), column: Int32(clamping: match.column)))
        }
        for (lineNumber, count) in lines.sorted(by: { $0.key < $1.key }) where count > 1 {
            findings.add(.refPlaceholderSameLine, "line \(lineNumber) of the body holds \(count) placeholders: Dumpling's greedy pattern reads them as one unknown id",
                         at: location, hint: "Put every placeholder on its own line.")
        }
        let hasCR = ByteScan.contains(13, in: body)
        if hasCR {
            findings.add(.refLineEndings, "the body has CR line endings, which shorten Dumpling's placeholder search window",
                         at: location, hint: "Use LF line endings only.")
        }
        // Dumpling searches body.characters.count UTF-16 units: placeholders past that are not
        // found. Plain ASCII without CR has one UTF-16 unit per character, so nothing falls
        // outside, and counting characters (grapheme breaking, 3% of a large validate) is skipped.
        if hasCR || !ByteScan.isASCII(body), matches.contains(where: \.isExact) {
            checkWindow(body, matches, at: location, into: &findings)
        }
    }

    private func checkWindow(_ body: String, _ matches: [Placeholder.Match], at location: SourceLocation, into findings: inout Findings) {
        let window = body.count
        if body.utf16.count > window, let last = matches.last(where: \.isExact) {
            let endUTF16 = String(decoding: Array(body.utf8)[..<last.utf8Range.upperBound], as: UTF8.self).utf16.count
            if endUTF16 > window {
                findings.add(.refPlaceholderWindow, "the placeholder `\(last.key)` ends past Dumpling's search window (\(window) of \(body.utf16.count) UTF-16 units), so apps never replace it",
                             at: location, hint: "Append at least \(body.utf16.count - window) spaces after the last placeholder (galley pack does).")
            }
        }
    }

    /// Resolves the placeholders `placeholders(in:)` could not resolve within their article.
    func resolvePlaceholders(_ index: ManifestIndex, into findings: inout Findings) {
        guard !index.placeholders.isEmpty else { return }
        var owner: [GlobalID.Key: Int?] = [:]
        owner.reserveCapacity(index.assets.count)
        for asset in index.assets where asset.idKey != .text("") { owner[asset.idKey] = asset.article }
        for placeholder in index.placeholders {
            switch owner[GlobalID.Key(placeholder.key)] {
            case nil:
                findings.add(.refPlaceholderUnknown, "the placeholder at \(placeholder.where_) names `\(placeholder.key)`, which no asset has",
                             at: placeholder.location(manifestPath), hint: "Use the id of one of the article's assets.")
            case .some(let assetArticle) where assetArticle != placeholder.article:
                findings.add(.refPlaceholderForeign, "the placeholder at \(placeholder.where_) names `\(placeholder.key)`, an asset of \(assetArticle.map { "article \($0 + 1)" } ?? "the issue")",
                             at: placeholder.location(manifestPath),
                             hint: "Dumpling finds it anyway, but importers that scope ids per article do not: list the asset under this article.")
            default: break
            }
        }
    }

    /// What makes a referenced path unsafe, if anything; when several do, the first of: absolute,
    /// a backslash, a `..` part, a control character.
    ///
    /// Read on the UTF-8 bytes, as the file system reads the path (a control character below
    /// U+0020 is one byte, and no byte of a longer character is below 0x80): `contains("\\")`
    /// went through Foundation's NSString search and `split` made an array a path, for two paths
    /// an asset, 0.2 s of a 30,000-article import's one-threaded end. A `..` between backslashes
    /// is reported as the backslash, which comes first, so the container checks' `..` test
    /// (which also splits at `\\`) serves here too.
    package static func pathProblem(_ value: String) -> String? {
        let bytes = value.utf8
        if bytes.first == UInt8(ascii: "/") { return "is absolute" }
        if bytes.contains(UInt8(ascii: "\\")) { return "contains a backslash" }
        if ContainerChecks.hasDotDot(bytes) { return "contains `..`" }
        if bytes.contains(where: { $0 < 0x20 }) { return "contains a control character" }
        return nil
    }
}



// MARK: Checks

extension ReferenceChecks {
    /// The checks on file references and placeholders, in catalogue order.
    package static let checks: [Check] = [
        .refEmptyPath,
        .refPathUnsafe,
        .refFileMissing,
        .refUnreferencedFile,
        .refBodyFileMissing,
        .refPlaceholderMalformed,
        .refPlaceholderUnknown,
        .refPlaceholderForeign,
        .refPlaceholderSameLine,
        .refLineEndings,
        .refPlaceholderWindow,
    ]
}

extension Check {
    static let refEmptyPath = Check("ref.empty-path", .references, .error, "file_name or crop_350_350 is empty.",
            explanation: "An empty file_name crashes `getAssetPath()!` while rendering; an empty crop_350_350 makes Dumpling's delete routine remove the whole asset folder.",
            triggering: [.asset("crop_350_350", "\"\""), .asset("file_name", "\"\"")], clean: [.validManifest])
    static let refPathUnsafe = Check("ref.path-unsafe", .references, .error, "A referenced path leaves the issue folder.",
            explanation: "Dumpling joins paths without normalising: `../` or an absolute path makes it read or delete files outside the issue.",
            triggering: [.asset("file_name", "\"../../Documents/default.realm\"").at("articles[0].images.ordered[0].file_name")], clean: [.validManifest])
    static let refFileMissing = Check("ref.file-missing", .references, .error, "A referenced file is not in the zip.",
            explanation: "The asset renders as a broken image or silent player.",
            triggering: [.fixture("zips/missing-file-error.zip")], clean: [.validZip])
    static let refUnreferencedFile = Check("ref.unreferenced-file", .references, .warning, "A file in the zip is referenced by no asset.",
            explanation: "It only makes the download bigger.",
            triggering: [.fixture("zips/unreferenced-file-warning.zip")], clean: [.validZip])
    static let refBodyFileMissing = Check("ref.body-file-missing", .references, .error, "A body's `<img src>`, `<source src>`, `<video poster>` or `<a href>` names a file that is not in the zip.",
            explanation: "A relative reference in a body is a file of the issue folder or nothing: the picture shows broken and the link leads nowhere, in the app and in the preview. Images belong in the article's assets with a placeholder; a file a body links to belongs in the zip under the name the body uses.",
            triggering: [.fixture("zips/body-image-missing-error.zip")], clean: [.validZip, .fixture("zips/body-link-valid.zip")])
    static let refPlaceholderMalformed = Check("ref.placeholder-malformed", .references, .error, "A placeholder is not spelled exactly `<!-- [ASSET: id] -->`.",
            explanation: "Dumpling's pattern matches case-insensitively but strips the delimiters case-sensitively, so `<!-- [asset: x] -->` matches and is never replaced.",
            triggering: [.body("<!-- [asset: photo-1] -->\n"), .body("<!--[ASSET:photo-1]-->\n")], clean: [.validManifest])
    static let refPlaceholderUnknown = Check("ref.placeholder-unknown", .references, .error, "A placeholder names no asset.",
            explanation: "Old builds leave the comment in place, newer ones remove it: either way the asset is missing.",
            triggering: [.body("<!-- [ASSET: nothing] -->\n")], clean: [.validManifest])
    static let refPlaceholderForeign = Check("ref.placeholder-foreign", .references, .warning, "A placeholder names another article's asset.",
            explanation: "Dumpling searches all assets, so it works there, but importers that scope assets to their article do not find it.",
            triggering: [.body("<!-- [ASSET: cover] -->\n")], clean: [.validManifest])
    static let refPlaceholderSameLine = Check("ref.placeholder-same-line", .references, .error, "Two placeholders share a line.",
            explanation: "The greedy `.+` in Dumpling's pattern swallows both into one match whose id matches nothing.",
            triggering: [.body("<p><!-- [ASSET: photo-1] --><!-- [ASSET: sound-1] --></p>\n")], clean: [.validManifest])
    static let refLineEndings = Check("ref.line-endings", .references, .warning, "The body has CR line endings.",
            explanation: "Each CRLF is one character but two UTF-16 units, shortening Dumpling's search window.",
            triggering: [.body("<p>a</p>\r\n<!-- [ASSET: photo-1] -->\r\n")], clean: [.validManifest])
    static let refPlaceholderWindow = Check("ref.placeholder-window", .references, .error, "A placeholder lies past Dumpling's search window.",
            explanation: "Dumpling searches the first `characters.count` UTF-16 units; emoji, CRLF and combining marks shorten the window, so placeholders near the end are never replaced.",
            triggering: [.body("<p>😀😀😀😀</p>\n<!-- [ASSET: photo-1] -->")],
            clean: [.body("<p>😀😀😀😀</p>\n<!-- [ASSET: photo-1] -->\n        ")])
}
