import Foundation
import GalleyCore
import GalleyFormats

/// What the manifest checks learn that later checks use: every asset and where it sits.
struct ManifestIndex {
    /// The issue's own fields as the model reads them, once latest.json was read to its end.
    package var issue: IssueRecord?
    /// One asset as the whole-issue checks need it, kept for every asset of the issue (60,000
    /// at 30,000 articles): small numbers and an enum instead of words and optionals where they do, and the
    /// thumbnail's name only when it is not the file's own.
    struct AssetRef {
        /// Its id; Galley's own ids as 12 bytes, not a string on the heap each.
        package let idKey: GlobalID.Key
        package var id: String { idKey.text }
        // The fields are declared in this order so that the one-byte ones fill the id's last
        // word and nothing is padded: 56 bytes an asset.
        /// The list it sits in (`images`, `sound_files`, `videos`).
        package var kind: MediaKind
        fileprivate var cropIsFileName: Bool
        /// The width and height its metadata declares (the media checks compare them with the
        /// file's header), not the metadata itself: at 30,000 articles, the kept trees were
        /// most of validate's memory. Int32.min: none.
        private var width: Int32
        private var height: Int32
        /// Its place in its list's `ordered`.
        var position: Int32
        private var line32: Int32
        /// -1 for issue images.
        private var article32: Int32
        /// Its `file_name`, as its number in the index's `fileNames` (`ManifestIndex.fileName(of:)`),
        /// -1 for none: a string on the heap each was 3.8 MB at 30,000 articles, the largest part
        /// of the manifest's index.
        fileprivate let fileNameNumber: Int
        /// The crop when it is not the file's own name, and the device variants: what most
        /// assets do not have, in a box only those that do carry.
        private let others: Others?

        private final class Others: Sendable {
            let crop: String?
            let variants: [String]
            init(crop: String?, variants: [String]) {
                self.crop = crop
                self.variants = variants
            }
        }

        init(id: String, kind: MediaKind, fileName: String?, crop: String?, variants: [String], declaredWidth: Int?,
             declaredHeight: Int?, position: Int, line: Int, article: Int?, fileNames: inout PackedStrings) {
            idKey = GlobalID.Key(id)
            self.kind = kind
            fileNameNumber = fileName.map { fileNames.append($0) } ?? -1
            cropIsFileName = crop != nil && crop == fileName
            let otherCrop = cropIsFileName ? nil : crop
            others = otherCrop == nil && variants.isEmpty ? nil : Others(crop: otherCrop, variants: variants)
            // Sizes past Int32 (no picture has them) are kept as its largest: still a mismatch.
            width = declaredWidth.map { Int32(clamping: $0) } ?? .min
            height = declaredHeight.map { Int32(clamping: $0) } ?? .min
            self.position = Int32(clamping: position)
            line32 = Int32(clamping: line)
            article32 = article.map { Int32(clamping: $0) } ?? -1
        }

        package var variants: [String] { others?.variants ?? [] }
        /// `images`, `sound_files` or `videos`.
        package var list: String { kind.manifestList }
        /// Its `crop_350_350` when that is another name than its `file_name` (`ManifestIndex.crop(of:)`
        /// gives it either way).
        fileprivate var otherCrop: String? { others?.crop }
        package var declaredWidth: Int? { width == .min ? nil : Int(width) }
        package var declaredHeight: Int? { height == .min ? nil : Int(height) }
        package var line: Int { Int(line32) }
        /// Index of the owning article, `nil` for issue images.
        package var article: Int? { article32 < 0 ? nil : Int(article32) }

        /// Where it sits in latest.json, made when a finding needs it (one kept string per
        /// asset was megabytes at 30,000 articles).
        package var jsonPath: String {
            (article.map { "articles[\($0)]." } ?? "") + "\(list).ordered[\(position)]"
        }
    }

    struct ArticleRef {
        package let idKey: GlobalID.Key?
        package var id: String? { idKey?.text }
        /// Its place in `articles`.
        var position: Int32
        package var line: Int

        package var jsonPath: String { "articles[\(position)]" }
    }

    /// A placeholder whose id names none of its article's own assets, resolved once every asset
    /// is known. Numbers, not
    /// words: one is kept per placeholder of the issue (60,000 at 30,000 articles), and the
    /// message and location are made only for the few that become findings.
    struct PlaceholderRef {
        package var key: String
        package var article: Int
        /// The article's line in latest.json.
        var articleLine: Int32
        /// Where the placeholder sits in the body.
        var line: Int32
        var column: Int32

        var where_: String { "line \(line), column \(column) of the body" }

        func location(_ manifestPath: String) -> SourceLocation {
            SourceLocation(path: manifestPath, line: Int(articleLine), jsonPath: "articles[\(article)].body")
        }
    }

    /// A body's local reference to a file.
    struct BodyFileRef {
        package var what: String
        package var where_: String
        package var location: SourceLocation
    }

    /// An article's `featured` keys, checked once the issue's id is known.
    struct FeaturedRef {
        package var keys: [String]
        package var location: SourceLocation
    }

    package var issueID: String?
    package var appleID: String?
    package var assets: [AssetRef] = []
    /// The assets' `file_name`s (`AssetRef.fileNameNumber`).
    var fileNames = PackedStrings()
    package var articles: [ArticleRef] = []
    package var placeholders: [PlaceholderRef] = []
    /// Files the bodies name (`<img src>`, `<a href>`...), relative to the issue folder: the
    /// first reference to each, for the reference checks once the zip's files are known.
    package var bodyFiles: [String: BodyFileRef] = [:]
    package var featured: [FeaturedRef] = []
    var previousDate: Int64?

    /// An asset's `file_name`.
    func fileName(of asset: AssetRef) -> String? { asset.fileNameNumber < 0 ? nil : fileNames[asset.fileNameNumber] }
    /// An asset's `crop_350_350`.
    func crop(of asset: AssetRef) -> String? { asset.cropIsFileName ? fileName(of: asset) : asset.otherCrop }
}

/// Checks on `latest.json` against what Dumpling reads (wire format §2): keys it force-casts,
/// their types, date forms, ids, metadata.
struct ManifestChecks {
    /// Display path of the manifest (`issue.zip!folder/latest.json`, or a file path).
    package let path: String

    static let issueStrings = ["global_id", "apple_id", "title", "description", "last_updated", "display_date", "publish_date"]
    package static let issueKeys = Set(issueStrings + ["metadata", "images", "articles"])
    static let articleStrings = [
        "global_id", "title", "body", "description", "url", "section", "author_name", "source", "dek", "author_url",
        "author_bio", "keywords", "commentary", "type", "date_last_updated",
    ]
    /// Article keys that Dumpling builds added after the first zip format, with when: an article
    /// without them (and with the legacy `metadata` for `meta` and `customMeta`) is in an older
    /// format, which the store imports.
    static let laterArticleKeys: [(key: String, since: String)] = [
        ("date_last_updated", "March 2015"), ("meta", "June 2015"), ("customMeta", "June 2015"), ("author_bio", "March 2016"),
    ]
    package static let articleKeys = Set(articleStrings + ["sku", "meta", "customMeta", "metadata", "featured", "images", "sound_files", "videos"])
    static let assetStrings = ["id", "caption", "source", "file_name", "crop_350_350"]
    package static let assetKeys = Set(assetStrings + ["metadata", "cover", "crop"])
    static let coverVariants = [
        "cover_main_iphone_portrait", "cover_main_iphone_portrait_retinal", "cover_main_ipad_portrait",
        "cover_main_ipad_portrait_retinal", "cover_icon_iphone_portrait_retinal",
    ]
    static let cropVariants = [
        "main_iphone_portrait", "main_iphone_portrait_retinal", "main_ipad_portrait", "main_ipad_portrait_retinal",
    ]

    package func at(_ node: LocatedJSON?, _ jsonPath: String) -> SourceLocation {
        SourceLocation(path: path, line: node?.line, column: node?.column, jsonPath: jsonPath.isEmpty ? nil : jsonPath)
    }

    /// The whole document at once (for bare manifests held in memory).
    package func run(_ root: LocatedJSON, into findings: inout Findings) -> ManifestIndex {
        var index = ManifestIndex()
        guard let members = root.members else {
            findings.add(.manifestType, "latest.json is \(root.typeName), not an object", at: at(root, ""),
                         hint: "The top level of latest.json is the issue object.")
            return index
        }
        if let articles = root["articles"]?.items {
            for (i, article) in articles.enumerated() { checkArticle(i, article, &index, into: &findings) }
        }
        let issue = LocatedJSON(value: .object(members.filter { $0.key != "articles" || $0.value.items == nil }),
                                line: root.line, column: root.column)
        checkIssue(issue, articlesSeen: root["articles"]?.items != nil, &index, into: &findings)
        finish(&index, root: issue, into: &findings)
        return index
    }

    /// The issue's own members (everything but a streamed `articles` array).
    func checkIssue(_ root: LocatedJSON, articlesSeen: Bool, _ index: inout ManifestIndex, into findings: inout Findings) {
        guard let members = root.members else { return }
        requireStrings(root, Self.issueStrings, "", "the issue", &findings)
        unknownKeys(members, Self.issueKeys, "", &findings)
        index.issueID = root["global_id"]?.string
        index.appleID = root["apple_id"]?.string
        if let publish = root["publish_date"]?.string, !Self.isDumplingPublishDate(publish) {
            let parts = publish.split(separator: "/", omittingEmptySubsequences: false)
            findings.add(.manifestPublishDate,
                         parts.count == 3 ? "publish_date `\(publish)` has non-numeric parts: Dumpling crashes on it"
                                          : "publish_date `\(publish)` is not MM/dd/yyyy: Dumpling takes it as today",
                         at: at(root["publish_date"], "publish_date"), hint: "Write it as MM/dd/yyyy, e.g. 01/05/2026.")
        } else if let publish = root["publish_date"]?.string, ISODateTime(dumplingPublishDate: publish) == nil {
            findings.add(.manifestPublishDate,
                         "publish_date `\(publish)` is no day of the calendar (month 1-12, a day the month has): a lenient parser rolls it over to another date",
                         at: at(root["publish_date"], "publish_date"), hint: "Write the real date as MM/dd/yyyy, e.g. 01/05/2026.")
        }
        metadataLike(root, "metadata", "metadata", required: false, &findings)
        let images = orderedList(root, "images", "", required: true, &findings)
        for (i, asset) in images.enumerated() {
            checkAsset(asset, in: .image, position: i, article: nil, &index, &findings)
        }
        guard !articlesSeen else { return }
        guard let articlesNode = root["articles"] else {
            findings.add(.manifestKeyMissing, "the issue has no `articles`: Dumpling crashes", at: at(root, "articles"),
                         hint: "Add `\"articles\": []` at least.")
            return
        }
        findings.add(.manifestType, "`articles` is \(articlesNode.typeName), not an array: Dumpling crashes",
                     at: at(articlesNode, "articles"), hint: "Make `articles` an array of article objects.")
    }

    /// One element of `articles`, checked and then dropped: memory stays flat however many there are.
    /// With `bodies`, the checks of the article's body are queued there, to be merged in by the
    /// caller; without, they run here.
    func checkArticle(_ i: Int, _ article: LocatedJSON, _ index: inout ManifestIndex, into findings: inout Findings,
                      bodies: BodyCheckThread? = nil) {
        let base = "articles[\(i)]"
        guard let articleMembers = article.members else {
            findings.add(.manifestType, "\(base) is \(article.typeName), not an object", at: at(article, base),
                         hint: "Each element of `articles` is an article object.")
            index.articles.append(ManifestIndex.ArticleRef(idKey: nil, position: Int32(i), line: article.line))
            return
        }
        // Keys later Dumpling builds added are reported together as an older format (which the
        // store imports), not as missing keys; the article is of no format when it also lacks
        // what its own era required.
        let hasLegacyMetadata = article["metadata"] != nil
        var olderFormat: [String] = []
        for (key, since) in Self.laterArticleKeys where article[key] == nil {
            if (key == "meta" || key == "customMeta") && !hasLegacyMetadata { continue }
            olderFormat.append("`\(key)` (required since \(since))")
        }
        if !olderFormat.isEmpty {
            findings.add(.manifestOlderFormat,
                         "article \(i + 1) is in an older Linechef format, without \(olderFormat.joined(separator: ", ")): Dumpling builds since then crash on it",
                         at: at(article, base),
                         hint: "Pack it again with Galley, or add the keys (`\"meta\": {\"published\": true}`, `\"customMeta\"` equal to `metadata`, `\"author_bio\": \"\"`, a `date_last_updated`). `galley import` accepts the older format.")
        }
        requireStrings(article, Self.articleStrings, base, "article \(i + 1)", &findings, skippingMissing: Set(Self.laterArticleKeys.map(\.key)))
        unknownKeys(articleMembers, Self.articleKeys, base, &findings)
        index.articles.append(ManifestIndex.ArticleRef(idKey: article["global_id"]?.string.map(GlobalID.Key.init), position: Int32(i), line: article.line))
        // meta, customMeta, legacy metadata (a missing meta or customMeta beside the legacy
        // metadata is the older format, reported above).
        if let meta = article["meta"] {
            if let published = meta["published"], case .string = published.value {
                findings.add(.manifestPublishedType, "\(base).meta.published is a string; Dumpling reads only a number or boolean, so the article counts as unpublished",
                             at: at(published, "\(base).meta.published"), hint: "Write `\"published\": true`.")
            }
            if meta.members == nil {
                findings.add(.manifestType, "\(base).meta is \(meta.typeName), not an object: Dumpling crashes",
                             at: at(meta, "\(base).meta"), hint: "Write `\"meta\": {\"published\": true}`.")
            }
        } else if !hasLegacyMetadata {
            findings.add(.manifestKeyMissing, "article \(i + 1) has no `meta`: Dumpling crashes", at: at(article, "\(base).meta"),
                         hint: "Add `\"meta\": {\"published\": true}`.")
        }
        metadataLike(article, "customMeta", "\(base).customMeta", required: !hasLegacyMetadata, &findings)
        if !hasLegacyMetadata {
            findings.add(.manifestLegacyMetadata, "article \(i + 1) has no legacy `metadata`, which Dumpling builds before June 2015 require",
                         at: at(article, "\(base).metadata"), hint: "Add `\"metadata\"` with the same value as `customMeta`.")
        } else {
            metadataLike(article, "metadata", "\(base).metadata", required: false, &findings)
        }
        if let sku = article["sku"], sku.string == nil {
            findings.add(.manifestType, "\(base).sku is \(sku.typeName); Dumpling ignores anything but a string",
                         at: at(sku, "\(base).sku"), hint: "Write the SKU as a string.")
        }
        if let featured = article["featured"] {
            if let members = featured.members {
                if !members.isEmpty {
                    index.featured.append(ManifestIndex.FeaturedRef(keys: members.map(\.key), location: at(featured, "\(base).featured")))
                }
            } else {
                findings.add(.manifestFeatured, "`featured` is \(featured.typeName); Dumpling reads only an object keyed by the issue's id",
                             at: at(featured, "\(base).featured"), hint: "Write `\"featured\": {\"<issue global_id>\": 1}`.")
            }
        }
        // Dates decide the order apps list articles in.
        if let date = article["date_last_updated"]?.string {
            if date.isEmpty {
                findings.add(.manifestDateEmpty, "\(base).date_last_updated is empty: Dumpling uses the import time, which reverses the issue's order",
                             at: at(article["date_last_updated"], "\(base).date_last_updated"),
                             hint: "Give each article a date, decreasing along `articles`.")
            } else if let millis = Self.dumplingDate(date) {
                if let previousDate = index.previousDate, millis >= previousDate {
                    findings.add(.manifestDateOrder, "\(base).date_last_updated is not earlier than the previous article's: apps list articles newest first, so this one moves up",
                                 at: at(article["date_last_updated"], "\(base).date_last_updated"),
                                 hint: "Make dates strictly decrease along `articles`.")
                }
                index.previousDate = millis
            } else {
                findings.add(.manifestDateFormat, "\(base).date_last_updated `\(date)` is in neither of Dumpling's forms: its parser recurses until the app crashes",
                             at: at(article["date_last_updated"], "\(base).date_last_updated"),
                             hint: "Write yyyy-MM-dd'T'HH:mm:ss.SSS+0000, e.g. 2026-01-04T18:30:00.000+0000.")
            }
        }
        let firstAsset = index.assets.count
        for kind in MediaKind.allCases {
            let assets = orderedList(article, kind.manifestList, base, required: false, &findings)
            for (j, asset) in assets.enumerated() {
                checkAsset(asset, in: kind, position: j, article: i, &index, &findings)
            }
        }
        if let body = article["body"]?.string {
            let ownAssetIDs = Set(index.assets[firstAsset...].lazy.map(\.idKey).filter { $0 != .text("") })
            if let bodies {
                if !body.isEmpty {
                    bodies.check(.init(article: i, body: body, line: article.line, articlePath: base, ownAssetIDs: ownAssetIDs,
                                       position: findings.items.count))
                }
            } else {
                ReferenceChecks(manifestPath: path).placeholders(in: body, article: i, articlePath: base, line: article.line,
                                                               ownAssetIDs: ownAssetIDs, &index, into: &findings)
            }
        }
    }

    /// Checks that need every article: ids across the issue, `featured` keys, placeholder ids.
    package func finish(_ index: inout ManifestIndex, root: LocatedJSON, into findings: inout Findings) {
        if let issueID = index.issueID {
            for featured in index.featured where !featured.keys.contains(issueID) {
                findings.add(.manifestFeatured, "`featured` is not keyed by this issue's global_id, so the article is not featured",
                             at: featured.location, hint: "Write `\"featured\": {\"\(issueID)\": 1}`.")
            }
        }
        checkIDs(index, root, &findings)
        ReferenceChecks(manifestPath: path).resolvePlaceholders(index, into: &findings)
    }

    private func checkAsset(
        _ asset: LocatedJSON, in kind: MediaKind, position: Int, article: Int?, _ index: inout ManifestIndex,
        _ findings: inout Findings
    ) {
        let path = (article.map { "articles[\($0)]." } ?? "") + "\(kind.manifestList).ordered[\(position)]"
        guard let members = asset.members else {
            findings.add(.manifestType, "\(path) is \(asset.typeName), not an asset object", at: at(asset, path),
                         hint: "Each element of `ordered` is an asset object.")
            return
        }
        requireStrings(asset, Self.assetStrings, path, "the asset", &findings)
        unknownKeys(members, Self.assetKeys, path, &findings)
        metadataLike(asset, "metadata", "\(path).metadata", required: false, &findings)
        var variants: [String] = []
        for (key, required) in [("cover", Self.coverVariants), ("crop", Self.cropVariants)] {
            guard let node = asset[key] else { continue }
            guard let variantMembers = node.members else {
                findings.add(.manifestType, "\(path).\(key) is \(node.typeName), not an object", at: at(node, "\(path).\(key)"),
                             hint: "Leave `\(key)` out unless you emit every device variant.")
                continue
            }
            let missing = required.filter { name in !variantMembers.contains { $0.key == name && $0.value.string != nil } }
            if !missing.isEmpty {
                findings.add(.manifestVariants, "\(path).\(key) lacks \(missing.map { "`\($0)`" }.joined(separator: ", ")): Dumpling crashes on devices that need them",
                             at: at(node, "\(path).\(key)"), hint: "Give every portrait variant, or leave `\(key)` out altogether.")
            }
            variants += variantMembers.compactMap(\.value.string)
        }
        for key in ["file_name", "crop_350_350"] {
            if let value = asset[key]?.string, value.isEmpty {
                findings.add(.refEmptyPath,
                             key == "file_name" ? "\(path).file_name is empty: Dumpling crashes rendering the asset"
                                                : "\(path).crop_350_350 is empty: Dumpling's delete routine then removes the whole asset folder",
                             at: at(asset[key], "\(path).\(key)"), hint: "Name the file; for a missing thumbnail, repeat file_name.")
            }
        }
        let ref = ManifestIndex.AssetRef(
            id: asset["id"]?.string ?? "", kind: kind, fileName: asset["file_name"]?.string,
            crop: asset["crop_350_350"]?.string, variants: variants,
            declaredWidth: asset["metadata"]?["width"].flatMap { Int(JSONValue($0).numberText ?? "") },
            declaredHeight: asset["metadata"]?["height"].flatMap { Int(JSONValue($0).numberText ?? "") }, position: position,
            line: asset.line, article: article, fileNames: &index.fileNames)
        index.assets.append(ref)
    }

    private func checkIDs(_ index: ManifestIndex, _ root: LocatedJSON, _ findings: inout Findings) {
        /// Who holds an id: paths are made only for the few ids that become findings, not kept
        /// for every id of the issue (90,000 at 30,000 articles).
        enum Holder {
            case issue, article(Int), asset(Int)
        }
        func place(_ holder: Holder) -> (path: String, line: Int) {
            switch holder {
            case .issue: ("global_id", root["global_id"]?.line ?? 1)
            case .article(let i): ("\(index.articles[i].jsonPath).global_id", index.articles[i].line)
            case .asset(let i): ("\(index.assets[i].jsonPath).id", index.assets[i].line)
            }
        }
        // Holders by number: 0 the issue, then the articles, then the assets.
        let articleCount = index.articles.count
        func holder(_ number: Int32) -> Holder {
            let n = Int(number)
            return n == 0 ? .issue : n <= articleCount ? .article(n - 1) : .asset(n - 1 - articleCount)
        }
        let issueKey = GlobalID.Key(index.issueID ?? "")
        func id(_ number: Int32) -> GlobalID.Key {
            switch holder(number) {
            case .issue: issueKey
            case .article(let i): index.articles[i].idKey ?? .text("")
            case .asset(let i): index.assets[i].idKey
            }
        }
        // The numbers of the holders that have an id, in latest.json's order.
        var numbers: [Int32] = []
        numbers.reserveCapacity(1 + articleCount + index.assets.count)
        if index.issueID != nil { numbers.append(0) }
        for (i, article) in index.articles.enumerated() where article.idKey != nil { numbers.append(Int32(1 + i)) }
        for (i, asset) in index.assets.enumerated() where asset.idKey != .text("") { numbers.append(Int32(1 + articleCount + i)) }
        // Duplicates: the numbers sorted by id (and by number among equal ids), so each later
        // holder of an id comes right after the first one. Four bytes an id, where a dictionary
        // of every id was 4.2 MB at 30,000 articles (the peak of a validate).
        var sorted = numbers
        sorted.sort { a, b in
            let (x, y) = (id(a), id(b))
            return x < y || (x == y && a < b)
        }
        var firstHolder: [Int32: Int32] = [:]
        var first = sorted.first ?? 0
        for (previous, current) in zip(sorted, sorted.dropFirst()) {
            if id(current) == id(previous) { firstHolder[current] = first } else { first = current }
        }
        for number in numbers {
            let value = id(number).text
            if let problem = GlobalID.problem(with: value) {
                let (path, line) = place(holder(number))
                findings.add(.manifestIdUnsafe, "the id `\(value)` \(problem)", at: SourceLocation(path: self.path, line: line, jsonPath: path),
                             hint: "Use 24 hex digits; Dumpling interpolates ids into its queries.")
            }
            if let first = firstHolder[number] {
                let (path, line) = place(holder(number))
                findings.add(.manifestIdDuplicate, "the id `\(value)` is used by \(place(holder(first)).path) and \(path)",
                             at: SourceLocation(path: self.path, line: line, jsonPath: path),
                             hint: "Ids are primary keys in Dumpling's database: the later one overwrites the earlier.")
            }
        }
    }

    private func requireStrings(
        _ object: LocatedJSON, _ keys: [String], _ base: String, _ what: String, _ findings: inout Findings,
        skippingMissing: Set<String> = []
    ) {
        for key in keys {
            let path = base.isEmpty ? key : "\(base).\(key)"
            guard let value = object[key] else {
                if skippingMissing.contains(key) { continue }
                findings.add(.manifestKeyMissing, "\(what) has no `\(key)`: Dumpling force-casts it and crashes",
                             at: at(object, path), hint: "Add `\"\(key)\": \"\"` at least.")
                continue
            }
            if value.string == nil {
                findings.add(.manifestType, "`\(path)` is \(value.typeName), not a string: Dumpling crashes",
                             at: at(value, path), hint: "Write it as a string, e.g. `\"\(key)\": \"...\"`.")
            }
        }
    }

    private func metadataLike(_ object: LocatedJSON, _ key: String, _ path: String, required: Bool, _ findings: inout Findings) {
        guard let value = object[key] else {
            if required {
                findings.add(.manifestKeyMissing, "`\(path)` is missing: Dumpling crashes", at: at(object, path),
                             hint: "Add `\"\(key)\": {}`.")
            }
            return
        }
        switch value.value {
        case .object, .string: return
        default:
            findings.add(.manifestMetadataType, "`\(path)` is \(value.typeName); Dumpling takes only an object or a string and crashes otherwise",
                         at: at(value, path), hint: "Write an object, e.g. `\"\(key)\": {}`.")
        }
    }

    private func orderedList(_ object: LocatedJSON, _ key: String, _ base: String, required: Bool, _ findings: inout Findings) -> [LocatedJSON] {
        let path = base.isEmpty ? key : "\(base).\(key)"
        guard let list = object[key] else {
            if required {
                findings.add(.manifestKeyMissing, "`\(path)` is missing: Dumpling crashes", at: at(object, path),
                             hint: "Add `\"\(key)\": {\"ordered\": []}`.")
            }
            return []
        }
        guard list.members != nil else {
            findings.add(.manifestType, "`\(path)` is \(list.typeName), not an object: Dumpling calls objectForKey on it and crashes",
                         at: at(list, path), hint: "Write `\"\(key)\": {\"ordered\": [...]}`.")
            return []
        }
        guard let ordered = list["ordered"] else {
            if required {
                findings.add(.manifestKeyMissing, "`\(path).ordered` is missing: Dumpling crashes", at: at(list, "\(path).ordered"),
                             hint: "Add `\"ordered\": []`.")
            }
            return []
        }
        guard let items = ordered.items else {
            findings.add(.manifestType, "`\(path).ordered` is \(ordered.typeName), not an array", at: at(ordered, "\(path).ordered"),
                         hint: "Make `ordered` an array of assets.")
            return []
        }
        return items
    }

    private func unknownKeys(_ members: [LocatedJSON.Member], _ known: Set<String>, _ base: String, _ findings: inout Findings) {
        for member in members where !known.contains(member.key) {
            let path = base.isEmpty ? member.key : "\(base).\(member.key)"
            findings.add(.manifestUnknownKey, "`\(path)` is not a key Dumpling or Galley reads; it is ignored",
                         at: SourceLocation(path: self.path, line: member.keyLine, jsonPath: path),
                         hint: "Check its spelling, or keep custom values in `metadata`/`customMeta`.")
        }
    }

    /// `a/b/c` with numeric parts: what `Helper.publishedDateFrom` reads without falling back or crashing.
    static func isDumplingPublishDate(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return false }
        return parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }

    /// Milliseconds of a `date_last_updated` in one of the two forms Dumpling parses
    /// (`yyyy-MM-dd'T'HH:mm:ss.SSSZ`, `yyyy-MM-dd'T'HH:mm:ssZ`), else `nil`.
    static func dumplingDate(_ text: String) -> Int64? {
        // The shape, by bytes for an ASCII text (the same places as by `Character`s there: a
        // CR LF, one `Character` of two bytes, is never part of a date).
        let bytes = text.utf8
        let shaped = bytes.allSatisfy({ $0 < 0x80 })
            ? bytes.count >= 20 && bytes.dropFirst(10).first == UInt8(ascii: "T") && bytes.dropFirst(16).first == UInt8(ascii: ":")
            : text.count >= 20 && text.dropFirst(10).first == "T" && text.dropFirst(16).first == ":"
        guard shaped, let date = ISODateTime(parsing: text), date.hasTime, date.offsetMinutes != nil
        else { return nil }
        return date.millisecondsSinceEpoch
    }
}

// MARK: Checks

extension ManifestChecks {
    /// The checks on latest.json, in catalogue order.
    package static let checks: [Check] = [
        .manifestJson,
        .manifestDuplicateKey,
        .manifestType,
        .manifestKeyMissing,
        .manifestOlderFormat,
        .manifestPublishDate,
        .manifestDateFormat,
        .manifestDateEmpty,
        .manifestDateOrder,
        .manifestMetadataType,
        .manifestLegacyMetadata,
        .manifestPublishedType,
        .manifestFeatured,
        .manifestVariants,
        .manifestIdUnsafe,
        .manifestIdDuplicate,
        .manifestAppleId,
        .manifestUnknownKey,
    ]
}

extension Check {
    static let manifestJson = Check("manifest.json", .manifest, .error, "latest.json is not valid JSON.",
            explanation: "Dumpling's parse fails and the import returns silently.",
            triggering: [.manifest("{\"title\": \"x\",}")], clean: [.validManifest])
    static let manifestDuplicateKey = Check("manifest.duplicate-key", .manifest, .error, "A key is given twice in one object.",
            explanation: "JSON leaves a repeated key's meaning open: one reader takes the first value, another the last. A `file_name` given first as `../../../../etc/passwd` and then as a good name passes a checker that reads the last and reaches an app that reads the first. Refused anywhere in latest.json, in validate and import.",
            triggering: [CheckExample.manifest("{\"title\": \"x\",\n \"title\": \"y\"}").at(line: 2), .issue("metadata", "{\"a\": 1, \"a\": 2}"),
                         .fixture("zips/duplicate-key-error.zip")],
            clean: [.validManifest])
    static let manifestType = Check("manifest.type", .manifest, .error, "A value has the wrong JSON type.",
            explanation: "Dumpling force-casts (`as! String`, `as! NSArray`) and crashes on a number, null or array where it expects a string, and calls `objectForKey` on `images` and `sound_files`, crashing if they are arrays.",
            triggering: [.article("title", "42").at("articles[0].title"), .issue("images", "[]").at("images"), .article("sound_files", "\"none\"").at("articles[0].sound_files")],
            clean: [.validManifest])
    static let manifestKeyMissing = Check("manifest.key-missing", .manifest, .error, "A key Dumpling force-casts is missing.",
            explanation: "Every mandatory string (13 per article, 7 per issue, 5 per asset), and an article's meta and customMeta when it has no legacy metadata either, crash the app when absent.",
            triggering: [.article("title", nil), .issue("publish_date", nil), .asset("crop_350_350", nil)],
            clean: [.validManifest])
    package static let manifestOlderFormat = Check("manifest.older-format", .manifest, .error, "An article is in an older Linechef format.",
            explanation: "Keys Dumpling added later are missing: date_last_updated (March 2015), meta and customMeta beside the legacy metadata (June 2015), author_bio (March 2016). Builds since then crash on the article; `galley import` accepts it (as a warning), reading customMeta from metadata.",
            triggering: [.article("author_bio", nil), .article("meta", nil), .article("customMeta", nil), .article("date_last_updated", nil)],
            clean: [.validManifest])
    static let manifestPublishDate = Check("manifest.publish-date", .manifest, .error, "publish_date is not a calendar date as MM/dd/yyyy.",
            explanation: "Dumpling splits it on `/`: non-numeric parts crash, any other shape silently becomes today, and a lenient date parser rolls an impossible day (`13/45/2015`, `02/29/2015`) over to another one.",
            triggering: [.issue("publish_date", "\"2020-03-01\"").at("publish_date"), .issue("publish_date", "\"March/1/2020\"").at("publish_date"),
                         .issue("publish_date", "\"13/45/2015\"").at("publish_date"), .issue("publish_date", "\"02/29/2015\"").at("publish_date")],
            clean: [.issue("publish_date", "\"3/1/2020\""), .issue("publish_date", "\"02/29/2024\"")])
    static let manifestDateFormat = Check("manifest.date-format", .manifest, .error, "date_last_updated is in neither of Dumpling's forms.",
            explanation: "Its two ISO parsers call each other on failure until the stack overflows: every import of the issue crashes. A day the calendar does not have (`2015-02-29`) fails them as well.",
            triggering: [.article("date_last_updated", "\"01/03/2020\"").at("articles[0].date_last_updated"), .article("date_last_updated", "\"2020-03-01 10:00\""),
                         .article("date_last_updated", "\"2015-02-29T10:00:00.000+0000\"").at("articles[0].date_last_updated")],
            clean: [.article("date_last_updated", "\"2020-03-01T10:00:00+00:00\"")])
    static let manifestDateEmpty = Check("manifest.date-empty", .manifest, .warning, "date_last_updated is empty.",
            explanation: "Dumpling uses the import time, so articles without dates jump to the top of date-sorted lists.",
            triggering: [.article("date_last_updated", "\"\"")], clean: [.validManifest])
    static let manifestDateOrder = Check("manifest.date-order", .manifest, .warning, "Article dates do not decrease along `articles`.",
            explanation: "Apps list an issue's articles by date, newest first, not by their order in the zip.",
            triggering: [.fixture("manifests/date-order-warning.json")], clean: [.validManifest])
    static let manifestMetadataType = Check("manifest.metadata-type", .manifest, .error, "A metadata value is neither an object nor a string.",
            explanation: "Dumpling re-serialises objects and keeps strings; anything else crashes `as! String`.",
            triggering: [.article("customMeta", "[1, 2]"), .issue("metadata", "7")], clean: [.article("customMeta", "\"{}\"")])
    static let manifestLegacyMetadata = Check("manifest.legacy-metadata", .manifest, .warning, "An article lacks the legacy `metadata`.",
            explanation: "Dumpling builds before June 2015 read `metadata` instead of `customMeta` and crash without it.",
            triggering: [.article("metadata", nil)], clean: [.validManifest])
    static let manifestPublishedType = Check("manifest.published-type", .manifest, .warning, "meta.published is a string.",
            explanation: "Dumpling reads it `as? NSNumber`: the string \"true\" is ignored and the article counts as unpublished.",
            triggering: [.article("meta", "{\"published\": \"true\"}")], clean: [.article("meta", "{\"published\": 1}")])
    static let manifestFeatured = Check("manifest.featured", .manifest, .warning, "`featured` is not keyed by the issue's global_id.",
            explanation: "Dumpling sets isFeatured only from `featured[<issue global_id>]`; any other key leaves the article unfeatured.",
            triggering: [.article("featured", "{\"someone-else\": 1}"), .article("featured", "true")],
            clean: [.article("featured", "{\"5f0000000000000000000010\": 1}")])
    static let manifestVariants = Check("manifest.variants", .manifest, .error, "An asset's `cover` or `crop` lacks device variants.",
            explanation: "When `cover` or `crop` is present, Dumpling force-reads the running device's portrait variant (and the icon for covers): a missing one crashes on that device.",
            triggering: [.asset("cover", "{\"cover_main_iphone_portrait\": \"c.jpg\"}")], clean: [.validManifest])
    static let manifestIdUnsafe = Check("manifest.id-unsafe", .manifest, .error, "An id has characters that break Dumpling's queries.",
            explanation: "Ids are interpolated into predicate strings: `'` crashes or injects, `%` is read as a format, white space and `\\` break lookups.",
            triggering: [.article("global_id", "\"it's\""), .asset("id", "\"50%\"")], clean: [.validManifest])
    static let manifestIdDuplicate = Check("manifest.id-duplicate", .manifest, .error, "Two things share an id.",
            explanation: "Ids are Dumpling's primary keys: the later issue, article or asset overwrites the earlier one and re-parents it.",
            triggering: [.asset("id", "\"sound-1\""), .article("global_id", "\"5f0000000000000000000010\"")],
            clean: [.validManifest])
    static let manifestAppleId = Check("manifest.apple-id", .manifest, .error, "apple_id differs from the zip's folder.",
            explanation: "Dumpling builds the asset folder from apple_id, so every asset path breaks.",
            triggering: [.fixture("zips/apple-id-mismatch-error.zip")], clean: [.validZip])
    static let manifestUnknownKey = Check("manifest.unknown-key", .manifest, .info, "A key neither Dumpling nor Galley reads.",
            explanation: "Unknown keys are ignored everywhere, so a misspelt key silently loses its value. `videos` is Galley's known extension.",
            triggering: [.article("autor_name", "\"A. Writer\"")], clean: [.validManifest])
}
