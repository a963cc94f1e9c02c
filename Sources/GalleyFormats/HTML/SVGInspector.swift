internal import CLibXML2
import Foundation
import GalleyCore

/// What an SVG file would run if a browser or web view opened it: script elements (in any
/// namespace), event-handler attributes, `javascript:` URLs (also when spelt through entities),
/// foreign objects and embedded documents, XSLT stylesheets. Read through libxml2's SAX push
/// parser, so a file of any size costs one chunk of memory; no network, no entity substitution
/// (libxml2's own amplification guard stops entity bombs, which are then reported as malformed).
public struct SVGInspection: Sendable, Hashable {
    public struct Item: Sendable, Hashable {
        public var line: Int
        /// What was found, as an editor would search for it: `<script>`, `onload on <svg>`.
        public var what: String
    }

    /// Everything that could run, in document order.
    public var activeContent: [Item] = []
    /// Why the file is not well-formed XML (a browser shows an error instead of the image).
    public var malformed: Item?

    /// One line for a report: the first few items, and how many more.
    public var summary: String {
        let shown = activeContent.prefix(4).map { "\($0.what) (line \($0.line))" }
        let more = activeContent.count > 4 ? " and \(activeContent.count - 4) more" : ""
        return shown.joined(separator: ", ") + more
    }
}

/// Feeds an SVG file to libxml2 chunk by chunk. One scanner per file; not shared between threads.
public final class SVGScanner {
    /// Elements that run script or load a document of their own.
    static let activeElements: Set<String> = [
        "script", "foreignobject", "handler", "listener", "iframe", "embed", "object", "frame", "frameset",
    ]
    /// More collected items than this are counted but not kept.
    static let itemLimit = 64
    /// Entity expansion for attribute checks stops at this many characters.
    static let expansionLimit = 16_384

    final class State {
        var inspection = SVGInspection()
        var count = 0
        var entities: [String: String] = [:]

        func add(_ line: Int, _ what: String) {
            count += 1
            if inspection.activeContent.count < SVGScanner.itemLimit {
                inspection.activeContent.append(.init(line: line, what: what))
            }
        }
    }

    private let state = State()
    private var context: xmlParserCtxtPtr?
    private var handler = xmlSAXHandler()

    public init() {
        xmlSAXVersion(&handler, 2)
        // Keep libxml2's own DTD handling (entity declarations, lookups, the document that holds
        // them) and drop everything that would build a tree of the content.
        handler.startElementNs = { ctx, localName, prefix, _, _, _, attributeCount, _, attributes in
            guard let ctx, let state = SVGScanner.state(ctx) else { return }
            let line = Int(xmlSAX2GetLineNumber(ctx))
            let element = localName.map { String(cString: $0) } ?? ""
            let shown = prefix.map { String(cString: $0) + ":" + element } ?? element
            if SVGScanner.activeElements.contains(element.lowercased()) { state.add(line, "<\(shown)>") }
            guard let attributes else { return }
            for index in 0..<Int(attributeCount) {
                let base = attributes + 5 * index
                guard let name = base[0].map({ String(cString: $0) }) else { continue }
                var value = ""
                if let start = base[3], let end = base[4] {
                    value = String(decoding: UnsafeBufferPointer(start: start, count: end - start), as: UTF8.self)
                }
                let attribute = base[1].map { String(cString: $0) + ":" + name } ?? name
                if name.lowercased().hasPrefix("on"), name.count > 2 {
                    state.add(line, "\(attribute) on <\(shown)>")
                } else if URLScheme.isJavaScript(SVGScanner.expand(value, state.entities)) {
                    state.add(line, "javascript: in \(attribute) on <\(shown)>")
                }
            }
        }
        handler.endElementNs = nil
        handler.startElement = nil
        handler.endElement = nil
        handler.characters = nil
        handler.ignorableWhitespace = nil
        handler.cdataBlock = nil
        handler.comment = nil
        handler.reference = nil
        handler.processingInstruction = { ctx, target, data in
            guard let ctx, let state = SVGScanner.state(ctx), let target else { return }
            let text = data.map { String(cString: $0) }?.lowercased() ?? ""
            if String(cString: target) == "xml-stylesheet", text.contains("xsl") {
                state.add(Int(xmlSAX2GetLineNumber(ctx)), "XSLT stylesheet")
            }
        }
        handler.entityDecl = { ctx, name, type, publicID, systemID, content in
            xmlSAX2EntityDecl(ctx, name, type, publicID, systemID, content)
            guard let ctx, let state = SVGScanner.state(ctx), let name, let content else { return }
            state.entities[String(cString: name)] = String(cString: content)
        }
        handler.serror = { data, error in
            guard let data, let error, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue,
                  let state = SVGScanner.state(data), state.inspection.malformed == nil else { return }
            let message = error.pointee.message.map { String(cString: $0) }?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "not well-formed"
            state.inspection.malformed = .init(line: Int(error.pointee.line), what: message)
        }
        context = xmlCreatePushParserCtxt(&handler, nil, nil, 0, nil)
        if let context {
            context.pointee._private = Unmanaged.passUnretained(state).toOpaque()
            xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue
                | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOCDATA.rawValue))
        }
    }

    deinit {
        if let context {
            if let document = context.pointee.myDoc { xmlFreeDoc(document) }
            xmlFreeParserCtxt(context)
        }
    }

    /// Hands the parser the next bytes of the file.
    public func feed(_ bytes: some Collection<UInt8>) {
        guard let context else { return }
        // Zip chunks and file reads are contiguous: no copy; anything else is copied once.
        let parse = { (buffer: UnsafeBufferPointer<UInt8>) in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                _ = xmlParseChunk(context, chars.baseAddress, Int32(chars.count), 0)
            }
        }
        if bytes.withContiguousStorageIfAvailable(parse) == nil { Array(bytes).withUnsafeBufferPointer(parse) }
    }

    /// Ends the file and says what was found.
    public func finish() -> SVGInspection {
        guard let context else {
            return SVGInspection(activeContent: [], malformed: .init(line: 0, what: "libxml2 could not start a parser"))
        }
        xmlParseChunk(context, nil, 0, 1)
        var result = state.inspection
        if context.pointee.wellFormed == 0, result.malformed == nil {
            result.malformed = .init(line: Int(context.pointee.input?.pointee.line ?? 0), what: "not well-formed XML")
        }
        if state.count > result.activeContent.count {
            result.activeContent.append(.init(line: 0, what: "\(state.count - result.activeContent.count) more not listed"))
        }
        return result
    }

    /// Scans a whole file, reading it in chunks.
    public static func scan(fileAt path: String) throws -> SVGInspection {
        let scanner = SVGScanner()
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        while let chunk = try handle.read(upToCount: 1 << 16), !chunk.isEmpty {
            scanner.feed(chunk)
        }
        return scanner.finish()
    }

    private static func state(_ ctx: UnsafeMutableRawPointer) -> State? {
        let context = ctx.assumingMemoryBound(to: xmlParserCtxt.self)
        guard let pointer = context.pointee._private else { return nil }
        return Unmanaged<State>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Attribute values keep their entity references (entities are not substituted); a browser
    /// would substitute them, so they are spelt out here, within a bound, before the URL check.
    static func expand(_ value: String, _ entities: [String: String]) -> String {
        guard value.contains("&"), !entities.isEmpty else { return value }
        var text = value
        for _ in 0..<8 {
            var changed = false
            for (name, content) in entities where text.contains("&\(name);") {
                text = text.replacingOccurrences(of: "&\(name);", with: content)
                changed = true
                if text.utf8.count > expansionLimit { return String(text.prefix(expansionLimit)) }
            }
            if !changed { break }
        }
        return text
    }
}
