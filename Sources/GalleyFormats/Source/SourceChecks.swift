import GalleyCore

/// The findings of an issue source folder (what `galley pack` and `galley validate SOURCE`
/// report), declared beside the loader that emits them: `IssueSourceLoader`, `SourceTree`,
/// `YAMLFields`, `BodyBuilder` (placeholders), and pack's planner (media, ids, dates).
package enum SourceChecks {}

// MARK: Checks

extension SourceChecks {
    /// Every source finding, in catalogue order.
    package static let checks: [Check] = [
        .sourceIssueFileMissing,
        .sourceIssueFileAmbiguous,
        .sourceYamlInvalid,
        .sourceYamlExpansion,
        .sourceYamlDuplicateKey,
        .sourceFieldMissing,
        .sourceTypeMismatch,
        .sourceDateInvalid,
        .sourceAppleIdInvalid,
        .sourceIdUnsafe,
        .sourceIdDuplicate,
        .sourceBodyMissing,
        .sourceBodyAmbiguous,
        .sourceFieldsMissing,
        .sourceFieldsTwice,
        .sourceFrontMatterUnclosed,
        .sourceSlugDuplicate,
        .sourceOrderUnknown,
        .sourceOrderDuplicate,
        .sourceOrderMissing,
        .sourceFileMissing,
        .sourceFileUnreadable,
        .sourceEncoding,
        .sourceNameEncoding,
        .sourcePathUnsafe,
        .sourcePathOutside,
        .sourceSymlinkOutside,
        .sourceNameUnsafe,
        .sourceAssetKeyDuplicate,
        .sourceMediaEmpty,
        .sourceMediaUnknown,
        .sourceIssueImageKind,
        .sourceThumbnailKind,
        .sourceMediaExtensionMismatch,
        .sourceUnknownKey,
        .sourceDateOrder,
        .sourceNoArticles,
        .sourceStrayFile,
        .bodyPlaceholderUnknown,
        .bodyPlaceholderMalformed,
    ]
}

extension Check {
    package static let sourceIssueFileMissing = Check.source("source.issue-file-missing", .error, "The folder has no issue.yaml.", "Every issue source starts with issue.yaml (or issue.json).", "missing-issue-file-error")
    static let sourceIssueFileAmbiguous = Check.source("source.issue-file-ambiguous", .error, "The folder has more than one issue file.", "issue.yaml, issue.yml and issue.json would disagree; only one may exist.", "two-issue-files-error")
    static let sourceYamlInvalid = Check.source("source.yaml-invalid", .error, "A YAML (or JSON) file does not parse.", "Located at the line and column where the parser stopped.", "bad-yaml-error")
    static let sourceYamlExpansion = Check.source("source.yaml-expansion", .error, "A YAML file holds more than 100,000 keys, values and list items (aliases counted as what they name), or nests deeper than 64 levels.", "How billion-laughs bombs look: 400 bytes of aliases of aliases expand to hundreds of millions of values. Refused at once, before any field is read.", "yaml-alias-bomb-error")
    static let sourceYamlDuplicateKey = Check.source("source.yaml-duplicate-key", .error, "A key is given twice in one mapping.", "Which value counts would be a guess. Keys are compared as text: `2026:` and `\"2026\":` are one key (in latest.json both would be `\"2026\"`).", "duplicate-yaml-key-error")
    package static let sourceFieldMissing = Check.source("source.field-missing", .error, "A required field is missing.", "`title`, `apple_id` and `publish_date` for the issue, `title` for articles, `file` for assets.", "missing-required-field-error")
    static let sourceTypeMismatch = Check.source("source.type-mismatch", .error, "A field has the wrong shape.", "A list where text is wanted, `featured: maybe`, a mapping that is not one.", "type-mismatch-error")
    static let sourceDateInvalid = Check.source("source.date-invalid", .error, "A date is not ISO 8601.", "Source dates are ISO 8601 (2026-01-05, 2026-01-05T10:00:00Z); pack writes Dumpling's forms from them.", "bad-date-error")
    static let sourceAppleIdInvalid = Check.source("source.apple-id-invalid", .error, "apple_id has characters outside `[A-Za-z0-9._-]`.", "It names the zip and its folder.", "unsafe-apple-id-error")
    static let sourceIdUnsafe = Check.source("source.id-unsafe", .error, "An explicit id has characters that break Dumpling's queries.", "See manifest.id-unsafe.", "unsafe-id-error")
    package static let sourceIdDuplicate = Check.source("source.id-duplicate", .error, "Two things have one id.", "See manifest.id-duplicate.", "duplicate-id-error")
    static let sourceBodyMissing = Check.source("source.body-missing", .error, "An article folder has no article.md or article.html.", "Each article folder holds one body.", "body-missing-error")
    static let sourceBodyAmbiguous = Check.source("source.body-ambiguous", .error, "An article folder has more than one body.", "article.md and article.html would disagree.", "two-bodies-error")
    static let sourceFieldsMissing = Check.source("source.fields-missing", .error, "An article has no front matter and no article.yaml.", "Its title has to come from somewhere.", "fields-missing-error")
    static let sourceFieldsTwice = Check.source("source.fields-twice", .error, "An article has both front matter and article.yaml.", "Which one counts would be a guess.", "fields-twice-error")
    static let sourceFrontMatterUnclosed = Check.source("source.front-matter-unclosed", .error, "Front matter is never closed.", "Without a closing `---` the whole body would be read as YAML.", "front-matter-unclosed-error")
    static let sourceSlugDuplicate = Check.source("source.slug-duplicate", .error, "Two article folders have the same slug.", "Ids derive from the slug, so they would collide.", "slug-duplicate-error")
    static let sourceOrderUnknown = Check.source("source.order-unknown", .error, "`order` names a folder that does not exist.", "A typo would drop an article from the issue.", "order-unknown-error")
    static let sourceOrderDuplicate = Check.source("source.order-duplicate", .error, "`order` lists an article twice.", "An article appears once in an issue.", "order-duplicate-error")
    static let sourceOrderMissing = Check.source("source.order-missing", .error, "An article folder is not in `order`.", "A forgotten article would be published in the wrong place, or not at all.", "order-missing-error")
    static let sourceFileMissing = Check.source("source.file-missing", .error, "An asset file is missing (or is a folder).", "Paths are relative to the folder of the file that names them.", "missing-asset-error")
    package static let sourceFileUnreadable = Check.source("source.file-unreadable", .error, "A file cannot be read.", "Permissions, or a special file; checked only where the test runs without root.", "unreadable-error")
    static let sourceEncoding = Check.source("source.encoding", .error, "A text file is not UTF-8.", "Sources are UTF-8.", "latin1-body-error")
    static let sourceNameEncoding = Check.source("source.name-encoding", .error, "A name in articles/ is not valid UTF-8.", "Such a folder cannot be read by name, so its article would be lost without a word; zips and Dumpling need UTF-8 names anyway.", "non-utf8-folder-error")
    static let sourcePathUnsafe = Check.source("source.path-unsafe", .error, "An asset path is absolute or has a backslash or control character.", "Paths are relative, with `/`.", "absolute-path-error")
    static let sourcePathOutside = Check.source("source.path-outside", .error, "An asset path leaves the issue folder.", "Everything an issue packs is inside its folder.", "path-outside-error")
    static let sourceSymlinkOutside = Check.source("source.symlink-outside", .error, "A symbolic link leads outside the issue folder.", "It is never followed.", "symlink-outside-error")
    static let sourceNameUnsafe = Check.source("source.name-unsafe", .error, "A file name is unsafe inside a zip.", "`\\ : * ? \" < > |`, control characters, leading or trailing spaces, a trailing dot.", "unsafe-name-error")
    static let sourceAssetKeyDuplicate = Check.source("source.asset-key-duplicate", .error, "Two assets of an article have the same key.", "Placeholders could not tell them apart.", "duplicate-asset-key-error")
    package static let sourceMediaEmpty = Check.source("source.media-empty", .error, "A media file is empty.", "It would ship as a broken asset.", "empty-media-error")
    package static let sourceMediaUnknown = Check.source("source.media-unknown", .error, "A file's content is no known image, sound or video.", "The kind comes from the content, never from the name.", "media-unknown-error")
    package static let sourceIssueImageKind = Check.source("source.issue-image-kind", .error, "An issue image is not an image.", "The issue's images are its cover and pictures.", "issue-image-kind-error")
    package static let sourceThumbnailKind = Check.source("source.thumbnail-kind", .error, "A thumbnail is not an image.", "crop_350_350 is a square picture.", "thumbnail-kind-error")
    package static let sourceMediaExtensionMismatch = Check.source("source.media-extension-mismatch", .warning, "A file's content does not match its extension.", "Servers and web views pick the type from the extension.", "extension-mismatch-warning")
    static let sourceUnknownKey = Check.source("source.unknown-key", .warning, "An unknown key in a source file.", "Probably a typo; the hint suggests the nearest known key.", "unknown-key-warning")
    package static let sourceDateOrder = Check.source("source.date-order", .warning, "Given article dates do not decrease.", "Apps list articles newest first.", "date-order-warning")
    static let sourceNoArticles = Check.source("source.no-articles", .warning, "The issue has no articles/ folder.", "An issue without articles is allowed but unusual.", "no-articles-warning")
    static let sourceStrayFile = Check.source("source.stray-file", .warning, "A file sits where article folders belong.", "It is ignored.", "stray-file-warning")
    static let bodyPlaceholderUnknown = Check.source("body.placeholder-unknown", .error, "A placeholder key names no asset of the article.", "Keys are the asset's `id` or file name.", "unknown-placeholder-error")
    static let bodyPlaceholderMalformed = Check.source("body.placeholder-malformed", .error, "A placeholder is not spelled `<!-- [ASSET: key] -->`.", "See ref.placeholder-malformed.", "malformed-placeholder-error")
}

extension Check {
    /// A source check, triggered by its fixture under `Tests/Fixtures/sources/`.
    static func source(_ id: String, _ severity: Severity, _ summary: String, _ explanation: String, _ fixture: String,
                       clean: CheckExample = .validSource) -> Check {
        Check(id, .source, severity, summary, explanation: explanation, triggering: [.fixture("sources/\(fixture)")], clean: [clean])
    }
}
