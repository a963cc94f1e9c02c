internal import CLibXML2
import GalleyCore

/// What libxml2's HTML parser finds in an article body: malformed markup with its line and
/// column, and the things a reader app's web view would run or fetch. With HTMLSanitizer.swift,
/// SVGInspector.swift and XMLFeed.swift, the only files in Galley that touch CLibXML2
/// (docs/architecture.md, rule 8).
public struct HTMLInspection: Sendable {
    public struct Problem: Sendable, Hashable {
        public var line: Int
        public var column: Int
        public var message: String
    }

    public struct Finding: Sendable, Hashable {
        public var line: Int
        /// The element, and for attributes `element@attribute`.
        public var what: String
        public var value: String
    }

    public var problems: [Problem] = []
    public var scripts: [Finding] = []
    public var eventHandlers: [Finding] = []
    public var javascriptURLs: [Finding] = []
    public var remoteResources: [Finding] = []
}

public enum HTMLInspector {
    /// libxml2 2.9 does not know HTML5 elements (figure, video, source…) and says so with this
    /// code for each; those complaints are not problems.
    static let unknownTagCode: Int32 = 801

    private static let initialized: Void = { xmlInitParser() }()

    /// What libxml2 reported and the start tags showed so far: the one object both its error
    /// callback and its SAX callback are handed.
    private final class Collector {
        var inspection = HTMLInspection()
    }

    static let urlAttributes: Set<String> = ["href", "src", "action", "formaction", "poster", "data", "xlink:href", "background", "cite"]
    static let fetchingAttributes: Set<String> = ["src", "poster", "data", "srcset", "background"]

    public static func inspect(_ html: String) -> HTMLInspection {
        _ = initialized
        // libxml2 reads nothing from no bytes (`htmlReadMemory` gave no document and no
        // complaint); a context handed no bytes says "Document is empty".
        guard !html.isEmpty else { return HTMLInspection() }
        let collector = Collector()
        let context = Unmanaged.passUnretained(collector).toOpaque()
        xmlSetStructuredErrorFunc(context) { context, error in
            guard let context, let error else { return }
            let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
            let code = error.pointee.code
            guard code != HTMLInspector.unknownTagCode, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
            let message = error.pointee.message.map { String(cString: $0) }?.trimmingWhitespacesAndNewlines() ?? "malformed markup"
            collector.inspection.problems.append(HTMLInspection.Problem(
                line: Int(error.pointee.line), column: Int(error.pointee.int2), message: message))
        }
        defer { xmlSetStructuredErrorFunc(nil, nil) }
        // libxml2's HTML parser with a SAX callback for start tags only: no document tree is
        // built, walked and freed (libxml2 was two thirds of the body checks' thread at 30,000
        // articles). The parser keeps its own stack of open elements, so what it implies,
        // closes and complains about is what it does when it builds a tree; each start tag
        // (implied ones too) comes in document order, the order a walk of the tree met them,
        // with `ctxt->input->line` as the tag ends: the line the tree recorded, but not cut
        // to 16 bits (the tree said 65,535 for any later line).
        guard let parser = htmlNewParserCtxt() else { return HTMLInspection() }
        defer { htmlFreeParserCtxt(parser) }
        if let sax = parser.pointee.sax {
            sax.pointee.startDocument = nil
            sax.pointee.endDocument = nil
            sax.pointee.internalSubset = nil
            sax.pointee.externalSubset = nil
            sax.pointee.characters = nil
            sax.pointee.ignorableWhitespace = nil
            sax.pointee.cdataBlock = nil
            sax.pointee.comment = nil
            sax.pointee.processingInstruction = nil
            sax.pointee.reference = nil
            sax.pointee.endElement = nil
            sax.pointee.startElement = { parser, name, attributes in
                guard let parser, let name else { return }
                let context = parser.assumingMemoryBound(to: xmlParserCtxt.self)
                guard let pointer = context.pointee._private else { return }
                let collector = Unmanaged<Collector>.fromOpaque(pointer).takeUnretainedValue()
                let line = context.pointee.input.map { Int($0.pointee.line) } ?? 0
                HTMLInspector.startTag(name, attributes, line: line, into: &collector.inspection)
            }
        }
        parser.pointee._private = context
        let options = Int32(HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NONET.rawValue | HTML_PARSE_NOWARNING.rawValue)
        var text = html
        let document: htmlDocPtr? = text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                htmlCtxtReadMemory(parser, chars.baseAddress, Int32(chars.count), nil, "UTF-8", options)
            }
        }
        if let document { xmlFreeDoc(document) }  // none: no callback makes one
        return collector.inspection
    }

    /// One start tag: a script, and attributes that run code or fetch from the network.
    private static func startTag(
        _ rawName: UnsafePointer<xmlChar>, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?,
        line: Int, into found: inout HTMLInspection
    ) {
        let name = String(cString: rawName).lowercased()
        var source = ""  // a script's `src`
        defer { if name == "script" { found.scripts.append(.init(line: line, what: "script", value: source)) } }
        guard let attributes else { return }
        var index = 0
        while let rawAttrName = attributes[index] {
            defer { index += 2 }
            let attrName = String(cString: rawAttrName).lowercased()
            let isHandler = attrName.hasPrefix("on") && attrName.count > 2
            let isURL = urlAttributes.contains(attrName)
            let fetches = fetchingAttributes.contains(attrName) || (name == "link" && attrName == "href")
                || (name == "iframe" && attrName == "src")
            guard isHandler || isURL || fetches else { continue }
            // A valueless attribute: the tree gave a boolean attribute its own name as value.
            let value = attributes[index + 1].map { String(cString: $0) }
                ?? (htmlIsBooleanAttr(rawAttrName) != 0 ? attrName : "")
            if name == "script" && attrName == "src" { source = value }  // the parser keeps one of each name
            if isHandler {
                found.eventHandlers.append(.init(line: line, what: "\(name)@\(attrName)", value: value))
            }
            if isURL, URLScheme.isJavaScript(value) {
                found.javascriptURLs.append(.init(line: line, what: "\(name)@\(attrName)", value: value))
            }
            if fetches {
                let trimmed = value.trimmingWhitespacesAndNewlines().lowercased()
                if trimmed.hasPrefix("http://") || trimmed.hasPrefix("https://") || trimmed.hasPrefix("//") {
                    found.remoteResources.append(.init(line: line, what: "\(name)@\(attrName)", value: value))
                }
            }
        }
    }
}

import Foundation
