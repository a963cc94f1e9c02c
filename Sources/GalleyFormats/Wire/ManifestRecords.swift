import GalleyCore
/// Reads Dumpling's vocabulary back into Galley's model, tolerantly: what is missing or of
/// another type becomes empty (validate is where such problems are reported).
package enum ManifestRecords {
    package static func string(_ node: LocatedJSON?, _ key: String) -> String { node?[key]?.string ?? "" }

    package static func assets(_ node: LocatedJSON?, _ list: String, kind: MediaKind) -> [AssetRecord] {
        (node?[list]?["ordered"]?.items ?? []).compactMap { item in
            guard item.members != nil, let id = item["id"]?.string, let file = item["file_name"]?.string else { return nil }
            let crop = item["crop_350_350"]?.string ?? ""
            return AssetRecord(
                id: id, kind: kind, caption: string(item, "caption"), source: string(item, "source"), fileName: file,
                crop350: crop.isEmpty ? file : crop, metadata: item["metadata"].map(JSONValue.init))
        }
    }

    package static func article(_ node: LocatedJSON, issueGlobalID: String? = nil) -> ArticleRecord? {
        guard node.members != nil else { return nil }
        var record = ArticleRecord(
            globalID: string(node, "global_id"), title: string(node, "title"), body: string(node, "body"),
            dateLastUpdated: string(node, "date_last_updated"))
        record.description = string(node, "description")
        record.url = string(node, "url")
        record.section = string(node, "section")
        record.authorName = string(node, "author_name")
        record.source = string(node, "source")
        record.dek = string(node, "dek")
        record.authorURL = string(node, "author_url")
        record.authorBio = string(node, "author_bio")
        record.keywords = string(node, "keywords")
        record.type = string(node, "type")
        record.commentary = string(node, "commentary")
        record.sku = node["sku"]?.string
        // Dumpling reads meta.published as a number or boolean; anything else is unpublished.
        switch node["meta"]?["published"]?.value {
        case .bool(let flag)?: record.published = flag
        case .number(let n)?: record.published = (Double(n) ?? 0) != 0
        default: record.published = false
        }
        if let issueGlobalID, let value = node["featured"]?[issueGlobalID] {
            switch value.value {
            case .number(let n): record.featured = n == "1"
            case .bool(let b): record.featured = b
            case .string(let s): record.featured = s == "1"
            default: record.featured = false
            }
        }
        // customMeta, else the legacy metadata; an object or a string (Dumpling took both).
        if let meta = node["customMeta"] ?? node["metadata"] { record.customMeta = JSONValue(meta) }
        record.images = assets(node, "images", kind: .image)
        record.sounds = assets(node, "sound_files", kind: .sound)
        record.videos = assets(node, "videos", kind: .video)
        return record
    }

    package static func issue(_ node: LocatedJSON) -> IssueRecord {
        var record = IssueRecord(
            globalID: string(node, "global_id"), appleID: string(node, "apple_id"), title: string(node, "title"),
            lastUpdated: string(node, "last_updated"), displayDate: string(node, "display_date"),
            publishDate: string(node, "publish_date"))
        record.description = string(node, "description")
        record.metadata = node["metadata"].map(JSONValue.init) ?? .object([])
        record.images = assets(node, "images", kind: .image)
        return record
    }
}
