internal import CLibXML2
import GalleyCore

/// What the sanitizer took out of a body.
public struct Removal: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable {
        /// An element (with its content when the content is code: script, style, iframe…).
        case element
        /// An attribute outside the allow-list: event handlers, presentational leftovers.
        case attribute
        /// A URL whose scheme a reader's article may not use (`javascript:`, `data:text/html`).
        case url
    }

    public var kind: Kind
    /// `<script>`, `onerror on <img>`, `javascript: in href on <a>`.
    public var what: String
    /// The line in the body where libxml2 found it.
    public var line: Int
}

/// An article body reduced to what a reader app's article may hold: the elements, attributes
/// and URL schemes of text, tables, figures and media, re-serialised from libxml2's parse (so
/// nothing the browser parses differently from libxml2 survives: comments go, raw-text and
/// foreign elements go with their content). Written by hand because no maintained HTML
/// sanitizer exists for Swift on Linux; the parse is libxml2's, the rules are an allow-list.
public struct HTMLSanitizer: Sendable {
    /// Comments that are asset placeholders (checked for `--`, `<` and `>` as well), kept so
    /// that they can be expanded after sanitising. Every other comment is dropped.
    public var keepComment: @Sendable (_ whole: String) -> Bool

    public init(keepComment: @escaping @Sendable (_ whole: String) -> Bool) {
        self.keepComment = keepComment
    }

    public struct Result: Sendable {
        public var html: String
        public var removed: [Removal]
    }

    static let allowed: Set<String> = [
        "a", "abbr", "address", "article", "aside", "audio", "b", "bdi", "bdo", "blockquote", "br", "caption", "cite",
        "code", "col", "colgroup", "data", "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure",
        "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p",
        "picture", "pre", "q", "rp", "rt", "ruby", "s", "samp", "section", "small", "source", "span", "strong", "sub",
        "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "time", "tr", "track", "u", "ul", "var",
        "video", "wbr",
    ]
    /// Dropped with everything inside: code, embedded documents, raw-text and foreign content
    /// (whose parsing differs between libxml2 and browsers), document-level elements, controls.
    static let droppedWithContent: Set<String> = [
        "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "param", "noscript", "noembed",
        "noframes", "template", "svg", "math", "xmp", "plaintext", "listing", "textarea", "title", "meta", "link", "base",
        "select", "option", "input", "button", "canvas", "portal", "head",
    ]
    static let void: Set<String> = ["br", "col", "hr", "img", "source", "track", "wbr"]
    static let globalAttributes: Set<String> = ["class", "id", "title", "lang", "dir", "style", "role", "hidden", "translate"]
    static let elementAttributes: [String: Set<String>] = [
        "a": ["href", "target", "rel", "hreflang", "type", "download"],
        "img": ["src", "alt", "width", "height", "loading", "decoding", "srcset", "sizes"],
        "audio": ["src", "controls", "preload", "loop", "muted"],
        "video": ["src", "controls", "preload", "loop", "muted", "playsinline", "poster", "width", "height"],
        "source": ["src", "type", "srcset", "sizes", "media"],
        "track": ["src", "kind", "srclang", "label", "default"],
        "td": ["colspan", "rowspan", "headers", "align"], "th": ["colspan", "rowspan", "headers", "scope", "align", "abbr"],
        "col": ["span"], "colgroup": ["span"], "ol": ["start", "reversed", "type"], "li": ["value"],
        "blockquote": ["cite"], "q": ["cite"], "del": ["cite", "datetime"], "ins": ["cite", "datetime"],
        "time": ["datetime"], "data": ["value"], "details": ["open"],
    ]
    static let urlAttributes: Set<String> = ["href", "src", "poster", "cite", "srcset"]

    public func sanitize(_ body: String) -> Result {
        var walker = Walker(sanitizer: self)
        // The wrapper keeps libxml2 from wrapping leading text in an implied <p>.
        let text = "<div galley-sanitizer-root>" + body + "</div>"
        guard let document = HTMLParsing.parseKeepingWhitespace(text) else { return Result(html: "", removed: []) }
        defer { xmlFreeDoc(document) }
        var node = xmlDocGetRootElement(document)?.pointee.children
        while let current = node {
            let name = Walker.name(current)
            if name == "head" {
                walker.reportDropped(current.pointee.children)
            } else if name == "body" {
                var child = current.pointee.children
                while let inner = child {
                    if Walker.name(inner) == "div", xmlHasProp(inner, "galley-sanitizer-root") != nil {
                        walker.children(inner)
                    } else {
                        walker.node(inner)
                    }
                    child = inner.pointee.next
                }
            } else {
                walker.node(current)
            }
            node = current.pointee.next
        }
        return Result(html: String(decoding: walker.out, as: UTF8.self), removed: walker.removed)
    }

    struct Walker {
        let sanitizer: HTMLSanitizer
        var out: [UInt8] = []
        var removed: [Removal] = []

        static func name(_ node: xmlNodePtr) -> String {
            node.pointee.name.map { String(cString: $0) }?.lowercased() ?? ""
        }

        mutating func children(_ node: xmlNodePtr) {
            var child = node.pointee.children
            while let current = child {
                self.node(current)
                child = current.pointee.next
            }
        }

        /// Reports the elements under `start` (head content) without writing anything.
        mutating func reportDropped(_ start: xmlNodePtr?) {
            var node = start
            while let current = node {
                if current.pointee.type == XML_ELEMENT_NODE {
                    removed.append(Removal(kind: .element, what: "<\(Self.name(current))>", line: Int(xmlGetLineNo(current))))
                }
                node = current.pointee.next
            }
        }

        mutating func node(_ node: xmlNodePtr) {
            switch node.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                append(escaped: content(node), quotes: false)
            case XML_ENTITY_REF_NODE:
                append(escaped: "&" + Self.name(node) + ";", quotes: false)
            case XML_COMMENT_NODE:
                let text = content(node)
                let whole = "<!--" + text + "-->"
                if !text.contains("--"), !text.contains("<"), !text.contains(">"), sanitizer.keepComment(whole) {
                    out += Array(whole.utf8)
                }
            case XML_ELEMENT_NODE:
                element(node)
            default:
                break
            }
        }

        mutating func element(_ node: xmlNodePtr) {
            let name = Self.name(node)
            let line = Int(xmlGetLineNo(node))
            // A task list's checkbox (cmark-gfm writes a disabled one) is the one control kept.
            if name == "input", Self.isTaskCheckbox(node) {
                out += Array("<input type=\"checkbox\" disabled".utf8)
                if xmlHasProp(node, "checked") != nil { out += Array(" checked".utf8) }
                out.append(UInt8(ascii: ">"))
                return
            }
            if HTMLSanitizer.droppedWithContent.contains(name) {
                removed.append(Removal(kind: .element, what: "<\(name)>", line: line))
                return
            }
            guard HTMLSanitizer.allowed.contains(name) else {
                // Unknown or unwanted wrapper (font, center, form, o:p): its content stays.
                removed.append(Removal(kind: .element, what: "<\(name)>", line: line))
                children(node)
                return
            }
            out += Array("<\(name)".utf8)
            var attribute = node.pointee.properties
            let own = HTMLSanitizer.elementAttributes[name] ?? []
            while let current = attribute {
                defer { attribute = current.pointee.next }
                let attributeName = current.pointee.name.map { String(cString: $0) }?.lowercased() ?? ""
                let value = Self.value(node, current)
                let known = HTMLSanitizer.globalAttributes.contains(attributeName) || own.contains(attributeName)
                    || attributeName.hasPrefix("aria-") || attributeName.hasPrefix("data-")
                guard known, !attributeName.hasPrefix("on") else {
                    removed.append(Removal(kind: .attribute, what: "\(attributeName) on <\(name)>", line: line))
                    continue
                }
                if HTMLSanitizer.urlAttributes.contains(attributeName),
                   let scheme = HTMLSanitizer.refusedScheme(value, attribute: attributeName, element: name) {
                    removed.append(Removal(kind: .url, what: "\(scheme) in \(attributeName) on <\(name)>", line: line))
                    continue
                }
                out += Array(" \(attributeName)=\"".utf8)
                append(escaped: value, quotes: true)
                out.append(UInt8(ascii: "\""))
            }
            out.append(UInt8(ascii: ">"))
            if HTMLSanitizer.void.contains(name) { return }
            // libxml2 keeps the newline right after <pre> that browsers drop: written back as
            // it came, the browser drops it again.
            children(node)
            out += Array("</\(name)>".utf8)
        }

        static func isTaskCheckbox(_ node: xmlNodePtr) -> Bool {
            guard xmlHasProp(node, "disabled") != nil, let type = xmlGetProp(node, "type") else { return false }
            defer { galley_xmlFree(type) }
            return String(cString: type).lowercased() == "checkbox"
        }

        func content(_ node: xmlNodePtr) -> String {
            node.pointee.content.map { String(cString: $0) } ?? ""
        }

        static func value(_ node: xmlNodePtr, _ attribute: xmlAttrPtr) -> String {
            guard let text = xmlNodeListGetString(node.pointee.doc, attribute.pointee.children, 1) else { return "" }
            defer { galley_xmlFree(text) }
            return String(cString: text)
        }

        mutating func append(escaped text: String, quotes: Bool) {
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "&"): out += Array("&amp;".utf8)
                case UInt8(ascii: "<"): out += Array("&lt;".utf8)
                case UInt8(ascii: ">"): out += Array("&gt;".utf8)
                case UInt8(ascii: "\"") where quotes: out += Array("&quot;".utf8)
                default: out.append(byte)
                }
            }
        }
    }

    /// The scheme of a URL a reader's article may not use, or nil when the URL is fine:
    /// relative URLs, fragments, http(s), mailto and tel; `data:image/…` in images.
    static func refusedScheme(_ value: String, attribute: String, element: String) -> String? {
        let candidates = attribute == "srcset"
            ? value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? "" }
            : [value]
        for url in candidates {
            guard let scheme = URLScheme.of(url)?.lowercased() else { continue }
            switch scheme {
            case "http", "https", "mailto", "tel": continue
            case "data" where (element == "img" || element == "source")
                && url.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().hasPrefix("data:image/"):
                continue
            default: return scheme + ":"
            }
        }
        return nil
    }
}

/// libxml2's HTML parser, keeping whitespace-only text (its default handler drops it in places,
/// which would join words and lines).
enum HTMLParsing {
    /// The text a reader sees of an HTML fragment: character references decoded, markup
    /// removed (with the content of code and other elements the sanitizer drops whole),
    /// whitespace runs made one space. `The quay&#8217;s <em>new</em> caf&eacute;` is `The
    /// quay’s new café`.
    static func plainText(_ html: String) -> String {
        guard html.contains("<") || html.contains("&") else { return collapsingWhitespace(html) }
        guard let document = parseKeepingWhitespace("<div>" + html + "</div>") else { return collapsingWhitespace(html) }
        defer { xmlFreeDoc(document) }
        var bytes: [UInt8] = []
        func walk(_ start: xmlNodePtr?) {
            var node = start
            while let current = node {
                switch current.pointee.type {
                case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                    if let content = current.pointee.content {
                        bytes.append(contentsOf: UnsafeBufferPointer(start: content, count: strlen(content)))
                    }
                case XML_ELEMENT_NODE:
                    let name = HTMLSanitizer.Walker.name(current)
                    if !HTMLSanitizer.droppedWithContent.contains(name) {
                        let parts = separating.contains(name)
                        if parts { bytes.append(0x20) }
                        walk(current.pointee.children)
                        if parts { bytes.append(0x20) }
                    }
                default: break
                }
                node = current.pointee.next
            }
        }
        walk(xmlDocGetRootElement(document)?.pointee.children)
        return collapsingWhitespace(String(decoding: bytes, as: UTF8.self))
    }

    /// Elements whose edges part words (a line break, a block): `<p>a</p><p>b</p>` is `a b`.
    private static let separating: Set<String> = [
        "br", "p", "div", "li", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "tr", "td", "th", "figcaption",
    ]

    private static func collapsingWhitespace(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    static func parseKeepingWhitespace(_ html: String) -> htmlDocPtr? {
        var text = html
        return text.withUTF8 { buffer -> htmlDocPtr? in
            buffer.withMemoryRebound(to: CChar.self) { chars -> htmlDocPtr? in
                guard let context = htmlNewParserCtxt() else { return nil }
                defer { htmlFreeParserCtxt(context) }
                context.pointee.sax.pointee.ignorableWhitespace = xmlSAX2Characters
                context.pointee.sax.pointee.error = nil
                context.pointee.sax.pointee.warning = nil
                context.pointee.sax.pointee.serror = { _, _ in }
                let options = Int32(HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NONET.rawValue
                    | HTML_PARSE_NOWARNING.rawValue | HTML_PARSE_NOERROR.rawValue)
                return htmlCtxtReadMemory(context, chars.baseAddress, Int32(chars.count), nil, "UTF-8", options)
            }
        }
    }
}

import Foundation
