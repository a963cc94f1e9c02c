internal import CLibXML2
import GalleyCore

/// What libxml2's HTML parser finds in an article body: malformed markup with its line and
/// column, and the things a reader app's web view would run or fetch. With HTMLSanitizer.swift and SVGInspector.swift,
/// the only files in Galley that touch CLibXML2 (docs/architecture.md, rule 8).
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

    final class ErrorBox {
        package var problems: [HTMLInspection.Problem] = []
    }

    static let urlAttributes: Set<String> = ["href", "src", "action", "formaction", "poster", "data", "xlink:href", "background", "cite"]
    static let fetchingAttributes: Set<String> = ["src", "poster", "data", "srcset", "background"]

    public static func inspect(_ html: String) -> HTMLInspection {
        _ = initialized
        var result = HTMLInspection()
        let box = ErrorBox()
        let context = Unmanaged.passUnretained(box).toOpaque()
        xmlSetStructuredErrorFunc(context) { context, error in
            guard let context, let error else { return }
            let box = Unmanaged<ErrorBox>.fromOpaque(context).takeUnretainedValue()
            let code = error.pointee.code
            guard code != HTMLInspector.unknownTagCode, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
            let message = error.pointee.message.map { String(cString: $0) }?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "malformed markup"
            box.problems.append(HTMLInspection.Problem(
                line: Int(error.pointee.line), column: Int(error.pointee.int2), message: message))
        }
        defer { xmlSetStructuredErrorFunc(nil, nil) }
        let options = Int32(HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NONET.rawValue | HTML_PARSE_NOWARNING.rawValue)
        var text = html
        let document: htmlDocPtr? = text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                htmlReadMemory(chars.baseAddress, Int32(chars.count), nil, "UTF-8", options)
            }
        }
        result.problems = box.problems
        guard let document else { return result }
        defer { xmlFreeDoc(document) }
        walk(xmlDocGetRootElement(document), &result)
        return result
    }

    private static func walk(_ start: xmlNodePtr?, _ result: inout HTMLInspection) {
        var node = start
        while let current = node {
            if current.pointee.type == XML_ELEMENT_NODE {
                let name = current.pointee.name.map { String(cString: $0) }?.lowercased() ?? ""
                let line = Int(xmlGetLineNo(current))
                if name == "script" {
                    result.scripts.append(.init(line: line, what: "script", value: attribute(current, "src") ?? ""))
                }
                var attr = current.pointee.properties
                while let a = attr {
                    let attrName = a.pointee.name.map { String(cString: $0) }?.lowercased() ?? ""
                    let value = attribute(current, attrName) ?? ""
                    let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
                    if attrName.hasPrefix("on") && attrName.count > 2 {
                        result.eventHandlers.append(.init(line: line, what: "\(name)@\(attrName)", value: value))
                    }
                    if urlAttributes.contains(attrName), URLScheme.isJavaScript(value) {
                        result.javascriptURLs.append(.init(line: line, what: "\(name)@\(attrName)", value: value))
                    }
                    if fetchingAttributes.contains(attrName) || (name == "link" && attrName == "href")
                        || (name == "iframe" && attrName == "src") {
                        if trimmed.hasPrefix("http://") || trimmed.hasPrefix("https://") || trimmed.hasPrefix("//") {
                            result.remoteResources.append(.init(line: line, what: "\(name)@\(attrName)", value: value))
                        }
                    }
                    attr = a.pointee.next
                }
            }
            walk(current.pointee.children, &result)
            node = current.pointee.next
        }
    }

    private static func attribute(_ node: xmlNodePtr, _ name: String) -> String? {
        guard let value = xmlGetProp(node, name) else { return nil }
        defer { galley_xmlFree(value) }
        return String(cString: value)
    }
}

import Foundation
