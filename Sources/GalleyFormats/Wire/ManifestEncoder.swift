import Foundation
import GalleyCore

/// Encodes the manifest values as Dumpling reads them (wire format §2 and §8): every key it
/// force-casts present with the right JSON type, in a fixed order.
public enum ManifestEncoder {
    public static func json(_ asset: AssetRecord) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(asset.id)),
            ("caption", .string(asset.caption)),
            ("source", .string(asset.source)),
            ("file_name", .string(asset.fileName)),
            ("crop_350_350", .string(asset.crop350)),
        ]
        if let metadata = asset.metadata { members.append(("metadata", metadata)) }
        return .object(members)
    }

    package static func ordered(_ assets: [AssetRecord]) -> JSONValue {
        .object([("ordered", .array(assets.map(json)))])
    }

    public static func json(_ article: ArticleRecord, issueGlobalID: String) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("global_id", .string(article.globalID)),
            ("title", .string(article.title)),
            ("body", .string(article.body)),
            ("description", .string(article.description)),
            ("url", .string(article.url)),
            ("section", .string(article.section)),
            ("author_name", .string(article.authorName)),
            ("source", .string(article.source)),
            ("dek", .string(article.dek)),
            ("author_url", .string(article.authorURL)),
            ("author_bio", .string(article.authorBio)),
            ("keywords", .string(article.keywords)),
            ("commentary", .string(article.commentary)),
            ("type", .string(article.type)),
            ("date_last_updated", .string(article.dateLastUpdated)),
        ]
        if let sku = article.sku { members.append(("sku", .string(sku))) }
        members.append(("meta", .object([("published", .bool(article.published))])))
        members.append(("customMeta", article.customMeta))
        members.append(("metadata", article.customMeta))
        if article.featured { members.append(("featured", .object([(issueGlobalID, .int(1))]))) }
        members.append(("images", ordered(article.images)))
        members.append(("sound_files", ordered(article.sounds)))
        if !article.videos.isEmpty { members.append(("videos", ordered(article.videos))) }
        return .object(members)
    }

    /// The issue's own members, in order, before `articles`.
    public static func members(_ issue: IssueRecord) -> [(String, JSONValue)] {
        [
            ("global_id", .string(issue.globalID)),
            ("apple_id", .string(issue.appleID)),
            ("title", .string(issue.title)),
            ("description", .string(issue.description)),
            ("last_updated", .string(issue.lastUpdated)),
            ("display_date", .string(issue.displayDate)),
            ("publish_date", .string(issue.publishDate)),
            ("metadata", issue.metadata),
            ("images", ordered(issue.images)),
        ]
    }

    /// The whole `latest.json` text for an issue whose articles are all in memory.
    public static func document(_ issue: IssueRecord, articles: [ArticleRecord]) -> String {
        let writer = JSONWriter()
        var members = members(issue)
        members.append(("articles", .array(articles.map { json($0, issueGlobalID: issue.globalID) })))
        return writer.encode(.object(members)) + "\n"
    }
}

/// Writes `latest.json` one article at a time, handing it on in chunks of about 64 KiB (pack
/// streams them into its zip), so that an issue of any size needs the memory of one article.
/// The bytes are the same as `ManifestEncoder.document`.
public final class ManifestWriter {
    private let output: ([UInt8]) throws -> Void
    private let writer = JSONWriter()
    private let issueGlobalID: String
    private var buffer: [UInt8] = []
    private var articleCount = 0
    public private(set) var bytesWritten: Int64 = 0
    private static let chunk = 64 * 1024

    /// Hands each chunk to `output`, which may keep it (the next chunk is a new array).
    public init(issue: IssueRecord, output: @escaping ([UInt8]) throws -> Void) {
        self.output = output
        issueGlobalID = issue.globalID
        // A chunk is handed on once past 64 KiB: room for one more article of up to 64 KiB
        // without the array doubling (pack keeps a few chunks queued for its deflating thread).
        buffer.reserveCapacity(Self.chunk + 64 * 1024)
        buffer.append(contentsOf: "{".utf8)
        for (key, value) in ManifestEncoder.members(issue) {
            writer.newline(&buffer, 1)
            JSONWriter.appendQuoted(key, to: &buffer)
            buffer.append(contentsOf: ": ".utf8)
            writer.write(value, into: &buffer, indent: 1)
            buffer.append(contentsOf: ",".utf8)
        }
        writer.newline(&buffer, 1)
        buffer.append(contentsOf: "\"articles\": [".utf8)
    }

    public func append(_ article: ArticleRecord) throws {
        if articleCount > 0 { buffer.append(contentsOf: ",".utf8) }
        writer.newline(&buffer, 2)
        writer.write(ManifestEncoder.json(article, issueGlobalID: issueGlobalID), into: &buffer, indent: 2)
        articleCount += 1
        if buffer.count > Self.chunk { try flush() }
    }

    public func finish() throws {
        if articleCount > 0 {
            writer.newline(&buffer, 1)
        }
        buffer.append(contentsOf: "]".utf8)
        writer.newline(&buffer, 0)
        buffer.append(contentsOf: "}\n".utf8)
        try flush()
    }

    private func flush() throws {
        try output(buffer)
        bytesWritten += Int64(buffer.count)
        // When the output keeps the chunk (queued for another thread), the array is shared and
        // this starts a new one of the same capacity; otherwise it is reused.
        buffer.removeAll(keepingCapacity: true)
    }
}
