import Foundation
import GalleyCore
import GalleyFormats

/// One file that goes into the zip. Kept for every file while the zip is planned and written
/// (60,000 at 30,000 articles), so its source path is kept as the folder's path (one string
/// shared by the folder's files) and the file's path relative to the issue (the source's own
/// string): an absolute path string per file was 7 MB.
public struct ZipEntryPlan: Sendable, Hashable {
    /// Path inside the issue folder of the zip (without the `<apple_id>/` prefix).
    public var name: String
    /// `path` is `base` followed by `relative`.
    private var base: String
    private var relative: String
    public var size: Int64
    public var compression: ZipCompression
    /// The source file it stands for, when `path` is made from it (a thumbnail): where
    /// findings about the entry point.
    public var origin: String?

    /// Absolute path of the source file.
    public var path: String { relative.isEmpty ? base : base + relative }

    public init(name: String, path: String, size: Int64, compression: ZipCompression, origin: String? = nil) {
        self.init(name: name, base: path, relative: "", size: size, compression: compression, origin: origin)
    }

    init(name: String, base: String, relative: String, size: Int64, compression: ZipCompression, origin: String? = nil) {
        (self.name, self.base, self.relative, self.size, self.compression, self.origin) = (name, base, relative, size, compression, origin)
    }
}

/// What pack keeps of a planner once every article is planned: the summary's facts, without
/// the planner's tables (ids, names taken, probes). The zip's entries go on beside it, in a
/// list of their own that pack lets go once the zip is written.
struct PlannedIssue {
    let issue: IssueRecord
    let entryTime: Int64
    let articleCount: Int
    let assetCount: Int

    init(_ planner: PackPlanner) {
        (issue, entryTime, articleCount, assetCount) = (planner.issue, planner.entryTime, planner.articleCount, planner.assetCount)
    }
}

/// Everything about an issue that is known before its bodies are converted: ids, file names in
/// the zip, media kinds, dates. Fed one article at a time, so it holds only what later
/// articles and the zip need: the zip entries, the ids in use, the previous article's date.
public struct PackPlanner {
    /// DOS times cannot go before 1980.
    static let earliestZipTime: Int64 = 315_532_800

    public private(set) var issue: IssueRecord
    /// Seconds since 1970 written as every entry's modification time: `SOURCE_DATE_EPOCH`, else
    /// the issue's `publish_date`, which a correction keeps (a new `last_updated` would change
    /// every entry's local header, and a delta update could reuse none of them).
    public let entryTime: Int64
    public private(set) var diagnostics = DiagnosticLog()
    public private(set) var articleCount = 0
    public private(set) var assetCount = 0
    /// The pictures (and posters) planned without a thumbnail outcome, that pack with its
    /// default thumbnails would try to make one of: each could add an entry. Kept as hashes of
    /// their paths (8 bytes each, not a path string), for `galley validate`'s count of a
    /// source's entries with thumbnails (`pack.zip64-with-thumbnails`), and only when it asks
    /// (`countsThumbnailCandidates`): pack and render have no use for them.
    private var thumbnailCandidates = Set<Int>()
    private let countsThumbnailCandidates: Bool
    /// How many distinct pictures `thumbnailCandidates` holds.
    var thumbnailCandidateCount: Int { thumbnailCandidates.count }
    private let appleID: String
    private var names = EntryNames()
    private var ids = IDRegistry()
    private var previousDate: Int64?
    private let baseDate: Int64

    /// Plans the issue itself and its own images. `lastUpdated` (milliseconds since 1970), when
    /// given, replaces the source's `last_updated` (`pack --bump`).
    /// `probed` and `thumbnails` hold what was read of the issue's own images, and the square
    /// thumbnails made for them, by path (`Packer.issuePlanner` does both).
    /// `countingThumbnailCandidates`: keep `thumbnailCandidateCount` (validate of a source).
    public init(
        _ source: IssueSource, sourceDateEpoch: Int64?, lastUpdated override: Int64? = nil,
        probed: [String: MediaProbe] = [:], thumbnails: [String: ThumbnailMaker.Outcome] = [:],
        countingThumbnailCandidates: Bool = false
    ) {
        countsThumbnailCandidates = countingThumbnailCandidates
        self.probed = probed
        self.thumbnails = thumbnails
        appleID = source.appleID
        let issueID = source.globalID ?? GlobalID.issue(appleID: source.appleID)
        let lastUpdated = source.lastUpdated ?? source.publishDate
        baseDate = override ?? lastUpdated.millisecondsSinceEpoch
        entryTime = max(sourceDateEpoch ?? source.publishDate.millisecondsSinceEpoch / 1000, Self.earliestZipTime)
        issue = IssueRecord(
            globalID: issueID, appleID: source.appleID, title: source.title,
            lastUpdated: DumplingDate.iso(millisecondsSinceEpoch: baseDate),
            displayDate: source.displayDate ?? source.publishDate.monthAndYear,
            publishDate: source.publishDate.dumplingPublishDate)
        issue.description = source.description
        issue.metadata = source.metadata ?? .object([])
        ids.claim(issueID, what: .issue, at: SourceLocation(path: source.issueFile, jsonPath: "global_id"),
                  &diagnostics)
        for asset in source.images {
            guard let record = assetRecord(asset, owner: "") else { continue }
            if record.kind != .image {
                diagnostics.add(Diagnostic(
                    .sourceIssueImageKind,
                    "the issue image `\(asset.file.relativePath)` is a \(record.kind.rawValue) file, not an image",
                    at: asset.location, hint: "An issue's `images` holds its cover and other pictures only."))
            }
            issue.images.append(record)
        }
    }

    /// The media files, sorted by name: the order they are written in after `latest.json`.
    /// Taken once: the planner's name tables are let go.
    public mutating func takeEntries() -> [ZipEntryPlan] { names.takeSortedEntries() }

    /// The findings so far, handed over: the planner's log is empty after.
    public mutating func takeDiagnostics() -> [Diagnostic] { diagnostics.take() }

    /// The media files planned so far, their bytes, and how many of them are thumbnails made
    /// here: what the zip holds besides latest.json, which only grows as articles are planned.
    var plannedFiles: (count: Int, bytes: Int64, thumbnails: Int) { (names.count, names.payload, names.thumbnailCount) }

    /// Plans one article (in issue order): its id, date and assets. The returned record has
    /// everything but the body; `assetIDs` maps local keys to global ids for the body.
    /// Media already probed (by path), e.g. on other cores; anything missing is probed here.
    var probed: [String: MediaProbe] = [:]
    /// Square thumbnails made for the next article's pictures (by source path). A picture
    /// without one (validate does not make them) keeps its own file as `crop_350_350`.
    var thumbnails: [String: ThumbnailMaker.Outcome] = [:]

    ///
    /// `body` is what the body names (`BodyFiles.resolve`, which already added an asset to the
    /// article for each `<img>`): every other referenced file is packed under the article's
    /// naming. `links` says what each reference becomes.
    public mutating func plan(
        _ article: ArticleSource, body: BodyFiles = BodyFiles()
    ) -> (record: ArticleRecord, assetIDs: [String: String], links: [String: PreparedBody.Target]) {
        articleCount += 1
        let articleID = article.id ?? GlobalID.article(appleID: appleID, slug: article.slug)
        ids.claim(articleID, what: .article(article.folder), at: SourceLocation(path: article.fieldsFile),
                  &diagnostics)
        // Dumpling sorts articles by date, newest first: derive strictly decreasing dates
        // where the source gives none, one minute apart, so the issue's order holds.
        let date: Int64
        if let given = article.date?.millisecondsSinceEpoch {
            if let previousDate, given >= previousDate {
                diagnostics.add(Diagnostic(
                    .sourceDateOrder,
                    "this article's date is not earlier than the previous article's, so Dumpling apps, which list articles newest first, will show it out of issue order",
                    at: article.dateLocation,
                    hint: "Give articles decreasing dates in issue order, or leave `date` out to have Galley derive them."))
            }
            date = given
        } else {
            date = previousDate.map { $0 - 60_000 } ?? baseDate
        }
        previousDate = date

        var record = ArticleRecord(
            globalID: articleID, title: article.title, body: "",
            dateLastUpdated: DumplingDate.iso(millisecondsSinceEpoch: date))
        record.description = article.description
        record.url = article.url
        record.section = article.section
        record.authorName = article.authorName
        record.source = article.source
        record.dek = article.dek
        record.authorURL = article.authorURL
        record.authorBio = article.authorBio
        // A comma inside a keyword becomes a space (commas separate them). Most have none, and
        // Foundation's `replacingOccurrences` is slow even then (0.08 s at 30,000 articles).
        record.keywords = article.keywords.map {
            $0.utf8.contains(UInt8(ascii: ",")) ? $0.replacingOccurrences(of: ",", with: " ") : $0
        }.joined(separator: ",")
        record.commentary = article.commentary
        record.type = article.type
        record.sku = article.sku
        record.published = article.published
        record.featured = article.featured
        record.customMeta = article.metadata ?? .object([])
        var assetIDs: [String: String] = [:]
        var assetsByFile: [String: PreparedBody.Target] = [:]
        var byKey: [String: PreparedBody.Target] = [:]
        for asset in article.assets {
            guard let assetRecord = assetRecord(asset, owner: article.slug) else { continue }
            assetIDs[asset.key] = assetRecord.id
            let target = PreparedBody.Target(name: assetRecord.fileName, assetID: assetRecord.id)
            byKey[asset.key] = target
            assetsByFile[asset.file.relativePath] = assetsByFile[asset.file.relativePath] ?? target
            switch assetRecord.kind {
            case .image: record.images.append(assetRecord)
            case .sound: record.sounds.append(assetRecord)
            case .video: record.videos.append(assetRecord)
            }
        }
        var links: [String: PreparedBody.Target] = [:]
        for item in body.references {
            let path = item.reference.path
            guard links[path] == nil, let file = body.files[path] else { continue }
            if let key = body.imageKeys[path], let target = byKey[key] {
                links[path] = target
            } else if let target = assetsByFile[file.relativePath] {
                links[path] = PreparedBody.Target(name: target.name)
            } else {
                let compressed = probed[file.path]?.format.isCompressed ?? false
                links[path] = PreparedBody.Target(name: names.name(for: file, owner: article.slug, compressed: compressed))
            }
        }
        return (record, assetIDs, links)
    }

    private mutating func assetRecord(_ asset: AssetSource, owner: String) -> AssetRecord? {
        guard let probe = probeMedia(asset.file, at: asset.location) else { return nil }
        var thumbnailName: String?
        if let thumbnail = asset.thumbnail {
            guard let format = stillPicture(thumbnail, role: "thumbnail", of: asset,
                                            hint: "Use a JPEG or PNG picture as the thumbnail.") else { return nil }
            thumbnailName = names.name(for: thumbnail, owner: owner, format: format)
        }
        if let poster = asset.poster {
            guard stillPicture(poster, role: "poster", of: asset,
                               hint: "Use a JPEG or PNG still of the video as its poster.") != nil else { return nil }
        }
        let fileName = names.name(for: asset.file, owner: owner, format: probe.format)
        // A thumbnail the source gives wins; else a picture gets the square one made for it.
        if thumbnailName == nil, let made = Self.thumbnailSource(asset, kind: probe.format.kind) {
            switch thumbnails[made.relativePath] {
            case .made(let file)?:
                thumbnailName = names.name(forThumbnail: file, of: made, owner: owner)
            case .failed(let reason)?:
                diagnostics.add(Diagnostic(
                    .packThumbnailFailed,
                    "cannot make the 350x350 thumbnail of `\(made.relativePath)`: \(reason); crop_350_350 names the picture itself",
                    at: asset.location, hint: "Check that the picture opens in an image viewer, or give the asset a `thumbnail:`."))
            case nil: if countsThumbnailCandidates { thumbnailCandidates.insert(made.relativePath.hashValue) }
            }
        }
        let id = asset.explicitID ?? GlobalID.asset(appleID: appleID, owner: owner, key: asset.key)
        ids.claim(id, what: .asset(asset.file.relativePath), at: asset.location, &diagnostics)
        assetCount += 1

        var metadata: [(String, JSONValue)] = []
        if !asset.alt.isEmpty { metadata.append(("alt", .string(asset.alt))) }
        if let size = probe.pixelSize {
            metadata.append(("width", .int(size.width)))
            metadata.append(("height", .int(size.height)))
        }
        metadata.append(("mime_type", .string(probe.format.mimeType)))
        if case .object(let extra)? = asset.metadata {
            for (key, value) in extra {
                metadata.removeAll { $0.0 == key }
                metadata.append((key, value))
            }
        }
        return AssetRecord(
            id: id, kind: probe.format.kind, caption: asset.caption, source: asset.credit, fileName: fileName,
            crop350: thumbnailName ?? fileName, metadata: .object(metadata))
    }

    /// The format of an asset's `thumbnail` or `poster`, which must be an image; nil (with the
    /// finding) otherwise.
    private mutating func stillPicture(_ file: SourceFile, role: String, of asset: AssetSource, hint: String) -> MediaFormat? {
        guard let probe = probeMedia(file, at: asset.location) else { return nil }
        guard probe.format.kind == .image else {
            diagnostics.add(Diagnostic(
                .sourceThumbnailKind, "the \(role) `\(file.relativePath)` is a \(probe.format.kind.rawValue) file, not an image",
                at: asset.location, hint: hint))
            return nil
        }
        return probe.format
    }

    /// The picture a square thumbnail is made from, when one is made: an image without a
    /// `thumbnail`, or a video's `poster`.
    static func thumbnailSource(_ asset: AssetSource, kind: MediaKind) -> SourceFile? {
        guard asset.thumbnail == nil else { return nil }
        switch kind {
        case .image: return asset.file
        case .video, .sound: return asset.poster
        }
    }

    private mutating func probeMedia(_ file: SourceFile, at location: SourceLocation) -> MediaProbe? {
        if file.size == 0 {
            diagnostics.add(Diagnostic(.sourceMediaEmpty, "the file `\(file.relativePath)` is empty", at: location,
                                   hint: "Replace it with the real picture, sound or video."))
            return nil
        }
        let result: MediaProbe?
        do {
            result = try probed[file.path] ?? MediaProber.probe(path: file.path)
        } catch {
            let (reason, hint) = FileSystemError.describe(error)
            diagnostics.add(Diagnostic(
                .sourceFileUnreadable, "the file `\(file.relativePath)` cannot be read: \(reason)", at: location, hint: hint))
            return nil
        }
        guard let result else {
            diagnostics.add(Diagnostic(
                .sourceMediaUnknown, "cannot tell what kind of media `\(file.relativePath)` is from its content",
                at: location,
                hint: "Galley packs JPEG, PNG, GIF, WebP, HEIF, AVIF and SVG images; MP3, AAC, M4A, Ogg, FLAC and WAV sound; MP4, MOV and WebM video."))
            return nil
        }
        if let svg = result.svg {
            for finding in MediaChecks.svgFindings(svg, name: file.relativePath, at: file.relativePath) { diagnostics.add(finding) }
        }
        let ext = (file.relativePath as NSString).pathExtension.lowercased()
        if !result.format.extensions.contains(ext) {
            diagnostics.add(Diagnostic(
                .sourceMediaExtensionMismatch,
                "`\(file.relativePath)` holds \(result.format.mimeType) data, which its extension `.\(ext)` does not suggest",
                at: location, hint: "Rename it to `.\(result.format.extensions[0])` so that apps and servers treat it right."))
        }
        return result
    }
}

/// What an article's body names, resolved to files of the issue folder; each `<img>` already
/// made an asset of the article (`resolve`).
public struct BodyFiles: Sendable {
    /// The body's local references, in document order.
    public var references: [PreparedBody.Reference] = []
    /// The file each reference names, by its path as written.
    public var files: [String: SourceFile] = [:]
    /// For each `<img>`'s path as written, the key of the asset it is.
    public var imageKeys: [String: String] = [:]

    public init() {}

    /// Adds an asset to `article` for each `<img>` in the body whose file is not an asset of it
    /// already, keyed by its path from the article's folder, with the alt text (else the title)
    /// as its caption; a file already listed stays that asset, with its own caption.
    public static func resolve(
        _ references: [PreparedBody.Reference], files: [String: SourceFile], into article: inout ArticleSource
    ) -> BodyFiles {
        var result = BodyFiles()
        result.references = references
        result.files = files
        var keyByFile: [String: String] = [:]
        for asset in article.assets where keyByFile[asset.file.relativePath] == nil { keyByFile[asset.file.relativePath] = asset.key }
        var taken = Set(article.assets.map(\.key))
        let folder = "articles/\(article.folder)/"
        for item in references where item.reference.isImage {
            let reference = item.reference
            guard result.imageKeys[reference.path] == nil, let file = files[reference.path] else { continue }
            if let key = keyByFile[file.relativePath] {
                result.imageKeys[reference.path] = key
                continue
            }
            let base = file.relativePath.hasPrefix(folder) ? String(file.relativePath.dropFirst(folder.count)) : file.relativePath
            var key = base
            var counter = 2
            while taken.contains(key) {
                key = "\(base)-\(counter)"
                counter += 1
            }
            var asset = AssetSource(key: key, file: file, location: item.location)
            asset.alt = reference.alt
            asset.caption = reference.alt.isEmpty ? reference.title : reference.alt
            article.assets.append(asset)
            taken.insert(key)
            keyByFile[file.relativePath] = key
            result.imageKeys[reference.path] = key
        }
        return result
    }
}

/// Gives every source file one name in the zip: flat, in the producer profile
/// (`[A-Za-z0-9._-]`), unique even without regard to case.
struct EntryNames {
    /// The plans, in the order their files came; `bySource` finds one by its source path.
    private var plans: [ZipEntryPlan] = []
    private var bySource: [String: Int32] = [:]
    /// The planned files' bytes, and how many of the files are thumbnails made here.
    private(set) var payload: Int64 = 0
    private(set) var thumbnailCount = 0
    /// How many files are planned.
    var count: Int { plans.count }
    /// Every name given, lowercased (names are mostly lowercase already: then the name's own
    /// string, not a copy).
    private var taken: Set<String> = ["latest.json"]
    /// The folder part of the last absolute source path, shared by the plans of its files.
    private var lastBase = ""

    package mutating func name(for file: SourceFile, owner: String, format: MediaFormat) -> String {
        name(for: file, owner: owner, compressed: format.isCompressed)
    }

    /// `compressed`: the file's data is compressed already, so it is stored, not deflated.
    package mutating func name(for file: SourceFile, owner: String, compressed: Bool) -> String {
        if let existing = bySource[file.relativePath] { return plans[Int(existing)].name }
        let base = SourceTree.zipSafeName(Self.lastComponent(file.relativePath))
        let wanted = owner.isEmpty ? base : SourceTree.zipSafeName(owner) + "-" + base
        let candidate = unique(wanted)
        let compression: ZipCompression = compressed ? .store : .deflate
        // The absolute path as the folder's path (shared) and the source's relative path.
        let full = file.path
        let plan: ZipEntryPlan
        let relative = file.relativePath.utf8
        if !relative.isEmpty, full.utf8.count > relative.count, full.utf8.suffix(relative.count).elementsEqual(relative) {
            // Bytes, not characters: the two parts must make exactly the path's bytes.
            let folder = full.utf8.dropLast(relative.count)
            if !folder.elementsEqual(lastBase.utf8) { lastBase = String(decoding: folder, as: UTF8.self) }
            plan = ZipEntryPlan(name: candidate, base: lastBase, relative: file.relativePath, size: file.size, compression: compression)
        } else {
            plan = ZipEntryPlan(name: candidate, path: full, size: file.size, compression: compression)
        }
        add(plan, key: file.relativePath)
        return candidate
    }

    /// The name of a picture's square thumbnail: `<owner>-<picture's stem>-350x350.jpg`,
    /// written from `file` (made in a scratch folder).
    package mutating func name(forThumbnail file: SourceFile, of picture: SourceFile, owner: String) -> String {
        let key = "\u{0}thumbnail/" + picture.relativePath
        if let existing = bySource[key] { return plans[Int(existing)].name }
        let stem = ((picture.relativePath as NSString).lastPathComponent as NSString).deletingPathExtension
        let base = SourceTree.zipSafeName(stem + "-350x350.jpg")
        let wanted = owner.isEmpty ? base : SourceTree.zipSafeName(owner) + "-" + base
        let name = unique(wanted)
        add(ZipEntryPlan(name: name, path: file.path, size: file.size, compression: .store, origin: picture.path), key: key)
        thumbnailCount += 1
        return name
    }

    /// The part of a relative path after its last `/` (the whole path without one): what
    /// `NSString.lastPathComponent` gives for such paths, without bridging to `NSString`.
    static func lastComponent(_ path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    private mutating func add(_ plan: ZipEntryPlan, key: String) {
        bySource[key] = Int32(plans.count)
        plans.append(plan)
        payload += plan.size
    }

    private mutating func unique(_ wanted: String) -> String {
        var candidate = wanted
        var counter = 2
        while taken.contains(Self.folded(candidate)) {
            let ext = (wanted as NSString).pathExtension
            let stem = (wanted as NSString).deletingPathExtension
            candidate = ext.isEmpty ? "\(stem)-\(counter)" : "\(stem)-\(counter).\(ext)"
            counter += 1
        }
        taken.insert(Self.folded(candidate))
        return candidate
    }

    /// `name` lowercased; the same string when it has no capital (names are zip-safe ASCII).
    private static func folded(_ name: String) -> String {
        name.utf8.contains(where: { (0x41...0x5A).contains($0) }) ? name.lowercased() : name
    }

    /// The plans sorted by name (the order they are written in), leaving none behind: the
    /// plans are moved, not copied, and the tables that found them are gone.
    mutating func takeSortedEntries() -> [ZipEntryPlan] {
        bySource = [:]
        taken = []
        var sorted = plans
        plans = []
        sorted.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        return sorted
    }
}

/// Ids must be unique across the issue, its articles and its assets.
struct IDRegistry {
    /// Who holds an id, described only when a second claim needs it: the strings it names are
    /// the source's own, where a sentence per id cost a big issue megabytes.
    enum Owner {
        case issue
        case article(String)
        case asset(String)

        var description: String {
            switch self {
            case .issue: "the issue"
            case .article(let folder): "the article `\(folder)`"
            case .asset(let path): "the asset `\(path)`"
            }
        }
    }

    /// Holders by id; Galley's own ids as 12 bytes, not strings (90,000 at 30,000 articles).
    private var owners: [GlobalID.Key: Owner] = [:]

    mutating func claim(_ id: String, what claimant: Owner, at location: SourceLocation?, _ log: inout DiagnosticLog) {
        let key = GlobalID.Key(id)
        if let owner = owners[key] {
            log.add(Diagnostic(.sourceIdDuplicate, "\(claimant.description) has the id `\(id)`, which \(owner.description) already has",
                           at: location, hint: "Ids must be unique in an issue: change or remove the explicit `id`."))
            return
        }
        owners[key] = claimant
    }
}
