import GalleyCore

/// Findings of `galley pack` about the zip it is asked to write (the source's own findings are
/// `SourceChecks`).
enum PackChecks {
    package static let checks: [Check] = [.packZipName, .packZip64Required, .packZip64WithThumbnails, .packThumbnailFailed]
}

extension Check {
    static let packZipName = Check(
        "pack.zip-name", .pack, .warning, "`--output` names the zip other than `<apple_id>.zip`.",
        explanation: "Dumpling loads `<apple_id>.zip` from the app bundle; a zip named otherwise is never found.",
        triggering: [.pack("sources/minimal-valid", zipName: "renamed.zip")],
        clean: [.pack("sources/minimal-valid")])
    static let packZip64Required = Check(
        "pack.zip64-required", .pack, .error, "The issue needs Zip64 (over 65,535 entries or 4 GiB) and `--allow-zip64` is not given.",
        explanation: "Dumpling's minizip 1.01h has no Zip64: such a zip cannot be opened. Pack refuses as soon as the articles planned so far are over (not after making every thumbnail), before it writes any media, and leaves nothing behind. Where the issue folder holds enough files to need Zip64 once each has a thumbnail, pack counts the articles' files first without making any: files alone over are refused before a thumbnail is made, and otherwise pack stops as soon as those files and the thumbnails made so far are over. Each thumbnail pack makes is an entry too: `--thumbnails none` makes none.",
        triggering: [.pack("sources/minimal-valid", maxEntries: 1)],
        clean: [.pack("sources/minimal-valid")])
    static let packZip64WithThumbnails = Check(
        "pack.zip64-with-thumbnails", .pack, .warning,
        "`galley validate` of a source: with the thumbnails pack makes by default, the zip could need Zip64.",
        explanation: "Validate makes no thumbnails, so it counts the zip's entries without them; pack makes a 350x350 thumbnail for every picture (and video poster) that has none of its own, each an entry. When those could take the zip past 65,535 entries, pack refuses it (`pack.zip64-required`) once enough thumbnails are made, after minutes of libvips on a large issue: this says so before. Up to: a picture libvips cannot decode gets no thumbnail.",
        triggering: [.validateSource("sources/minimal-valid", maxEntries: 2)],
        clean: [.validateSource("sources/minimal-valid", maxEntries: 3)])
    static let packThumbnailFailed = Check(
        "pack.thumbnail-failed", .pack, .warning, "libvips cannot make a picture's 350x350 thumbnail.",
        explanation: "Pack makes `crop_350_350` for every picture (and a video's `poster`) with libvips. A picture it cannot decode (truncated, or in a format this libvips lacks) keeps its own file as the thumbnail, as Linechef did: apps then scale the full picture.",
        triggering: [.pack("sources/undecodable-image-warning")],
        clean: [.pack("sources/minimal-valid")])
}
