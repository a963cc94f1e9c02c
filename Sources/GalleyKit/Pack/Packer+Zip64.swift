import Foundation
import GalleyCore
import GalleyFormats

// Knowing early that a pack with thumbnails needs Zip64.
//
// Pack stops as soon as the articles planned so far need more than a zip without Zip64 holds
// (`buildArticles`), but their thumbnails are made as they are read, and until the last
// article is planned nothing says how many files the others will bring: 30,000 articles of two
// pictures each (60,002 files, 120,003 entries with their thumbnails) were refused after ten
// minutes of libvips, once the first 16,384 articles' own files and thumbnails were over.
// Where the issue folder could hold that many, the articles are planned once without
// thumbnails or bodies first (seconds at 30,000 articles): an issue whose files alone are over
// is refused before any thumbnail is made, and the pack that follows adds the thumbnails made
// so far to the whole issue's files, so it stops as soon as those are over.

extension Packer {
    /// What a count of the zip's entries is made of, when pack stops before every article is
    /// planned (`zip64Required`'s words for it).
    enum Zip64Count {
        /// The files and thumbnails of the first `articles` articles planned.
        case firstArticles((articles: Int, of: Int))
        /// Every article's files (`filesWithoutThumbnails`) and the thumbnails made for the
        /// first `articles` planned.
        case wholeIssue((articles: Int, of: Int))

        /// How the finding says it; nil when the count is of the whole issue's planned files
        /// and thumbnails (every article planned: the count is exact).
        func words(thumbnails: Int) -> String? {
            switch self {
            case .firstArticles(let planned):
                planned.articles < planned.of ? "counted in the first \(planned.articles) of its \(planned.of) articles" : nil
            case .wholeIssue(let planned):
                "counted from all its articles' files and the \(thumbnails) thumbnails made for the first \(planned.articles)"
                    + " of its \(planned.of) articles"
            }
        }
    }

    /// The media files of a plan: how many, and their bytes.
    struct PlannedFiles: Sendable, Equatable {
        var count: Int
        var bytes: Int64
    }

    /// The most bytes a thumbnail takes: a 350x350 JPEG at quality 82 is 30-120 KB, and under
    /// its pixels' 367 KB whatever the picture.
    static let thumbnailBytesBound: Int64 = 512 << 10

    /// Every file the pack of `source` would hold without thumbnails (none made), when its folder
    /// holds enough files that their thumbnails could take the zip past `limits`; nil when it
    /// cannot (most issues: the folder is walked, nothing is read). Throws the
    /// `pack.zip64-required` refusal (with the findings so far) when the files alone are over.
    func filesWithoutThumbnails(
        _ source: IssueSource, options: PackOptions, progress: ((Int, Int) -> Void)? = nil
    ) throws -> PlannedFiles? {
        guard Self.mayNeedZip64(withThumbnails: source.root, limits: options.limits) else { return nil }
        var planner = Self.issuePlanner(source, sourceDateEpoch: options.sourceDateEpoch, lastUpdated: options.lastUpdated,
                                        thumbnails: nil)
        let total = source.articleFolders.count
        var done = 0
        _ = try buildArticles(source, &planner, zip64Limits: options.limits, buildingBodies: false) { _, _, _ in
            done += 1
            progress?(done, total)
        }
        let files = planner.plannedFiles
        return PlannedFiles(count: files.count, bytes: files.bytes)
    }

    /// Whether the files under `root` could make a zip past `limits` once each has a thumbnail:
    /// twice their count and latest.json over the entries, or their bytes with a thumbnail's
    /// most for each over the bytes. A link to a folder (through which the same files could be
    /// named twice), a folder that cannot be read or a name that is not UTF-8 (its path then
    /// names nothing) answers yes: the count then decides.
    static func mayNeedZip64(withThumbnails root: URL, limits: ZipLimits) -> Bool {
        var files = 0
        var bytes: Int64 = 0
        var folders = [root.path]
        while let folder = folders.popLast() {
            guard let names = rawDirectoryNames(folder) else { return true }
            for name in names {
                let path = folder + "/" + String(decoding: name, as: UTF8.self)
                guard let status = FileStatus(path, follow: false) else { return true }
                switch status.kind {
                case .directory: folders.append(path)
                case .file:
                    files += 1
                    bytes += status.size
                case .symlink:
                    guard let target = FileStatus(path), target.kind != .directory else { return true }
                    files += 1
                    bytes += target.size
                case .other: continue
                }
                if 2 * files + 1 > limits.maxEntries || bytes + Int64(files) * thumbnailBytesBound > limits.maxBytes { return true }
            }
        }
        return false
    }

    /// `pack.zip64-with-thumbnails` for `galley validate` of a source whose zip, of `entries`
    /// entries without thumbnails, would be over `limits` with a thumbnail for each of its
    /// `candidates` pictures, as pack makes by default; nil when it would not. "Up to": a
    /// picture that cannot be decoded gets none.
    static func zip64WithThumbnails(entries: Int, candidates: Int, limits: ZipLimits) -> Diagnostic? {
        let most = entries + candidates
        guard candidates > 0, most > limits.maxEntries else { return nil }
        return Diagnostic(
            .packZip64WithThumbnails,
            "with a thumbnail for each of its \(candidates) pictures, as pack makes them by default, the issue needs up to \(most) entries"
                + " (\(entries) without; the most a zip without Zip64 holds is \(limits.maxEntries)): `galley pack` refuses it as"
                + " pack.zip64-required once enough of them are made",
            at: SourceLocation(path: ""),
            hint: "Pack with --thumbnails none, give the pictures thumbnails of their own (`thumbnail:`), or split the issue;"
                + " --allow-zip64 packs it anyway for readers that support Zip64.")
    }
}
