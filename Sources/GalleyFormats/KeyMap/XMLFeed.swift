internal import CLibXML2
import Foundation
import GalleyCore

/// RSS (2.0, 0.9x and 1.0) and Atom 1.0 feeds as one JSON document a key map reads
/// (docs/key-maps.md, "RSS and Atom"; `Examples/key-maps/rss-atom.yaml` maps it):
///
///     {"format": "rss" or "atom", "title": "…", "items": [{"id", "title", "link", "summary",
///      "content", "date", "updated", "author", "categories": [...], "media": [{"url", "type"}]}]}
///
/// Every member of an item is there, null when the feed has none. Text is as the feed holds it
/// once XML is read (entities and CDATA undone; `title` and `summary` may be HTML, as RSS has
/// them); `link` and media URLs are made absolute against `xml:base`, the feed's own link or
/// the address it came from. Parsed by libxml2 with no network and no entity substitution: a
/// feed that declares entities is refused (an entity expanding into itself a billion times is
/// the oldest XML attack), and external ones are never read.
public enum XMLFeed {
    static let content = "http://purl.org/rss/1.0/modules/content/"
    static let dublinCore = "http://purl.org/dc/elements/1.1/"
    static let media = "http://search.yahoo.com/mrss/"
    static let atom = "http://www.w3.org/2005/Atom"

    private static let initialized: Void = { xmlInitParser() }()

    /// Whether `bytes` start as XML does (`<`, after a byte order mark and whitespace), rather
    /// than as JSON.
    public static func looksLikeXML(_ bytes: some Collection<UInt8>) -> Bool {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        return rest.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "<")
    }

    /// A file a key map reads (a file of articles, a saved answer of a feed): an RSS or Atom
    /// feed as `document` makes it, else JSON.
    public static func file(_ path: String, what: String, hint: String) throws -> JSONValue {
        if let data = FileManager.default.contents(atPath: path), looksLikeXML(data) {
            return try document(Array(data), address: path)
        }
        return try InputFile.json(path, what: what, hint: hint)
    }

    /// The feed in `bytes` (any encoding its XML declaration names) as the JSON document above.
    /// `address`: where it came from, the base of relative links and the name in errors.
    public static func document(_ bytes: [UInt8], address: String) throws -> JSONValue {
        _ = initialized
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
            | XML_PARSE_NOCDATA.rawValue | XML_PARSE_NOBLANKS.rawValue)
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                xmlReadMemory(chars.baseAddress, Int32(clamping: chars.count), address, nil, options)
            }
        }
        guard let document = parsed else {
            let detail = xmlGetLastError().map { error -> String in
                let message = error.pointee.message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "not XML"
                return "line \(error.pointee.line): \(message)"
            } ?? "not XML"
            throw GalleyError("\(address) is not well-formed XML (\(detail))", id: .feedInvalid, path: address,
                              hint: "An RSS or Atom feed is XML; check the address, or save the answer and look at it.")
        }
        defer { xmlFreeDoc(document) }
        if let subset = document.pointee.intSubset, Self.elements(subset.pointee.children).contains(where: { $0.pointee.type == XML_ENTITY_DECL }) {
            throw GalleyError("\(address) declares XML entities, which Galley does not expand", id: .feedInvalid, path: address,
                              hint: "RSS and Atom need none: a feed with an entity declaration in its DOCTYPE is refused as unsafe.")
        }
        guard let root = xmlDocGetRootElement(document) else {
            throw GalleyError("\(address) has no root element", id: .feedInvalid, path: address)
        }
        let rootName = name(root)
        let rootSpace = namespace(root)
        if rootName == "feed" && rootSpace == atom {
            return atomFeed(root, document, address)
        }
        if rootName == "rss" || rootName == "RDF" {
            return rssFeed(root, document, address)
        }
        throw GalleyError("\(address) is XML but neither RSS nor Atom (its root is <\(rootName)>)", id: .feedInvalid, path: address,
                          hint: "Give the feed's address (RSS 2.0 or Atom), or a JSON feed with --key-map.")
    }

    // MARK: RSS

    private static func rssFeed(_ root: xmlNodePtr, _ document: xmlDocPtr, _ address: String) -> JSONValue {
        // RSS 2.0: rss/channel/item; RSS 1.0: rdf:RDF/channel and rdf:RDF/item side by side.
        let channel = elements(root.pointee.children).first { name($0) == "channel" }
        let channelChildren = channel.map { elements($0.pointee.children) } ?? []
        let channelLink = channelChildren.first { name($0) == "link" && namespace($0) != atom }.map(text)
        let items = (channelChildren + elements(root.pointee.children)).filter { name($0) == "item" }
        return .object([
            ("format", .string("rss")),
            ("title", nullable(channelChildren.first { name($0) == "title" }.map(text))),
            ("items", .array(items.map { rssItem($0, document, address, channelLink) })),
        ])
    }

    private static func rssItem(_ item: xmlNodePtr, _ document: xmlDocPtr, _ address: String, _ channelLink: String?) -> JSONValue {
        let children = elements(item.pointee.children)
        func first(_ local: String, in space: String? = nil) -> String? {
            children.first { name($0) == local && (space == nil ? !isExtension($0) : namespace($0) == space) }.map(text).flatMap(nonEmpty)
        }
        let base = baseURL(item, document, fallback: channelLink.flatMap { absolute($0, against: address) } ?? address)
        let link = first("link").flatMap { absolute($0, against: base) }
        let guid = first("guid")
        var media: [JSONValue] = []
        for child in children + children.filter({ name($0) == "group" && namespace($0) == Self.media }).flatMap({ elements($0.pointee.children) }) {
            let isEnclosure = name(child) == "enclosure" && !isExtension(child)
            let isMedia = namespace(child) == Self.media && (name(child) == "content" || name(child) == "thumbnail")
            guard isEnclosure || isMedia, let url = attribute(child, "url").flatMap({ absolute($0, against: base) }) else { continue }
            media.append(.object([("url", .string(url)), ("type", nullable(attribute(child, "type") ?? (name(child) == "thumbnail" ? "image" : nil)))]))
        }
        return .object([
            ("id", nullable(guid ?? link ?? first("title"))),
            ("title", nullable(first("title"))),
            ("link", nullable(link)),
            ("summary", nullable(first("description"))),
            ("content", nullable(first("encoded", in: content))),
            ("date", nullable(first("pubDate") ?? first("date", in: dublinCore))),
            ("updated", nullable(first("updated", in: atom) ?? first("modified", in: dublinCore))),
            ("author", nullable(first("creator", in: dublinCore) ?? first("author"))),
            ("categories", .array(children.filter { name($0) == "category" && !isExtension($0) }.map(text).compactMap(nonEmpty).map(JSONValue.string))),
            ("media", .array(media)),
        ])
    }

    // MARK: Atom

    private static func atomFeed(_ root: xmlNodePtr, _ document: xmlDocPtr, _ address: String) -> JSONValue {
        let children = elements(root.pointee.children).filter { namespace($0) == atom }
        let feedAuthor = children.first { name($0) == "author" }.flatMap(authorName)
        let entries = children.filter { name($0) == "entry" }
        return .object([
            ("format", .string("atom")),
            ("title", nullable(children.first { name($0) == "title" }.map(atomText))),
            ("items", .array(entries.map { atomEntry($0, document, address, feedAuthor) })),
        ])
    }

    private static func atomEntry(_ entry: xmlNodePtr, _ document: xmlDocPtr, _ address: String, _ feedAuthor: String?) -> JSONValue {
        let children = elements(entry.pointee.children).filter { namespace($0) == atom }
        func first(_ local: String) -> xmlNodePtr? { children.first { name($0) == local } }
        let base = baseURL(entry, document, fallback: address)
        let links = children.filter { name($0) == "link" }
        let alternate = links.first { (attribute($0, "rel") ?? "alternate") == "alternate" }
        let media = links.filter { attribute($0, "rel") == "enclosure" }.compactMap { link -> JSONValue? in
            guard let url = attribute(link, "href").flatMap({ absolute($0, against: base) }) else { return nil }
            return .object([("url", .string(url)), ("type", nullable(attribute(link, "type")))])
        }
        let published = first("published").map(text).flatMap(nonEmpty)
        let updated = first("updated").map(text).flatMap(nonEmpty)
        return .object([
            ("id", nullable(first("id").map(text).flatMap(nonEmpty))),
            ("title", nullable(first("title").map(atomText).flatMap(nonEmpty))),
            ("link", nullable(alternate.flatMap { attribute($0, "href") }.flatMap { absolute($0, against: base) })),
            ("summary", nullable(first("summary").map(atomText).flatMap(nonEmpty))),
            ("content", nullable(first("content").map(atomText).flatMap(nonEmpty))),
            ("date", nullable(published ?? updated)),
            ("updated", nullable(updated)),
            ("author", nullable(first("author").flatMap(authorName) ?? feedAuthor)),
            ("categories", .array(children.filter { name($0) == "category" }.compactMap { attribute($0, "term") }.compactMap(nonEmpty).map(JSONValue.string))),
            ("media", .array(media)),
        ])
    }

    private static func authorName(_ author: xmlNodePtr) -> String? {
        elements(author.pointee.children).first { name($0) == "name" }.map(text).flatMap(nonEmpty)
    }

    /// An Atom text construct: `text` and `html` as their text, `xhtml` as the markup inside its
    /// one `div`.
    private static func atomText(_ node: xmlNodePtr) -> String {
        guard attribute(node, "type") == "xhtml" else { return text(node) }
        let holder = elements(node.pointee.children).first { name($0) == "div" } ?? node
        guard let buffer = xmlBufferCreate() else { return text(node) }
        defer { xmlBufferFree(buffer) }
        var child = holder.pointee.children
        while let current = child {
            xmlNodeDump(buffer, node.pointee.doc, current, 0, 0)
            child = current.pointee.next
        }
        guard let content = xmlBufferContent(buffer) else { return "" }
        return String(cString: content).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: The tree

    /// The element children of a node list (text, comments and the rest left out), and in a
    /// DTD its entity declarations.
    private static func elements(_ first: xmlNodePtr?) -> [xmlNodePtr] {
        var result: [xmlNodePtr] = []
        var node = first
        while let current = node {
            if current.pointee.type == XML_ELEMENT_NODE || current.pointee.type == XML_ENTITY_DECL { result.append(current) }
            node = current.pointee.next
        }
        return result
    }

    private static func name(_ node: xmlNodePtr) -> String { node.pointee.name.map { String(cString: $0) } ?? "" }

    private static func namespace(_ node: xmlNodePtr) -> String? { node.pointee.ns?.pointee.href.map { String(cString: $0) } }

    /// An element of a namespace RSS itself does not use (so `atom:link` is not the item's link).
    private static func isExtension(_ node: xmlNodePtr) -> Bool {
        guard let space = namespace(node) else { return false }
        return space != "http://purl.org/rss/1.0/" && space != "http://backend.userland.com/rss2"
    }

    /// The text inside an element: its text and CDATA, at any depth, trimmed. Entity
    /// references are not followed (none is declared: `document` refuses declarations).
    private static func text(_ node: xmlNodePtr) -> String {
        var bytes: [UInt8] = []
        func walk(_ first: xmlNodePtr?) {
            var child = first
            while let current = child {
                switch current.pointee.type {
                case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                    if let content = current.pointee.content {
                        bytes.append(contentsOf: UnsafeBufferPointer(start: content, count: strlen(content)))
                    }
                case XML_ELEMENT_NODE: walk(current.pointee.children)
                default: break
                }
                child = current.pointee.next
            }
        }
        walk(node.pointee.children)
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func attribute(_ node: xmlNodePtr, _ key: String) -> String? {
        guard let value = xmlGetProp(node, key) else { return nil }
        defer { galley_xmlFree(value) }
        return nonEmpty(String(cString: value).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The base of relative links at `node`: its `xml:base` (and its ancestors'), else `fallback`.
    private static func baseURL(_ node: xmlNodePtr, _ document: xmlDocPtr, fallback: String) -> String {
        var current: xmlNodePtr? = node
        var bases: [String] = []
        while let element = current, element.pointee.type == XML_ELEMENT_NODE {
            if let value = xmlGetNsProp(element, "base", "http://www.w3.org/XML/1998/namespace") {
                bases.append(String(cString: value))
                galley_xmlFree(value)
            }
            current = element.pointee.parent
        }
        return bases.reversed().reduce(fallback) { absolute($1, against: $0) ?? $0 }
    }

    /// `link` made absolute against `base`; nil when it is not a web address (`javascript:`,
    /// `data:`, nonsense).
    static func absolute(_ link: String, against base: String) -> String? {
        guard let url = URL(string: link.trimmingCharacters(in: .whitespacesAndNewlines), relativeTo: URL(string: base))?.absoluteURL,
              let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return nil }
        return url.absoluteString
    }

    private static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }

    private static func nullable(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
}
