import Foundation
import GalleyCore
import Yams

/// A key map (docs/key-maps.md): how a foreign JSON feed's items become independent articles.
/// YAML, declarative, checked before use; paths are JSON Pointers; each target takes the first
/// of its `from` pointers that is present, else its `default`; a bad item is skipped and
/// reported (item, pointer, target), never the whole batch.
///
///     galley_key_map: 1
///     items: /data/stories
///     article:
///       global_id: { from: /id }
///       title:     { from: [/title/rendered, /title] }
///       date:      { from: /date_gmt, formats: [iso8601] }
///       keywords:  { from: /tags, each: /name }
public struct KeyMap: Sendable {
    /// What an article field is made of.
    public enum Target: String, Sendable, CaseIterable {
        case globalID = "global_id"
        case title, dek, section, type, author, date, keywords, body, url, featured

        var kind: Kind {
            switch self {
            case .date: .date
            case .keywords: .list
            case .featured: .bool
            default: .text
            }
        }

        /// Without these an item is skipped.
        var required: Bool { self == .globalID || self == .title }
    }

    /// How a value is read: text (numbers become text), a date, a list of texts, a yes/no.
    public enum Kind: String, Sendable { case text, date, list, bool }

    public struct Rule: Sendable {
        public var from: [JSONPointer]
        public var defaultValue: JSONValue?
        /// Date formats, tried in order: `iso8601`, `unix` (seconds), or a pattern such as
        /// `EEE, dd MMM yyyy HH:mm:ss Z` (read in UTC, en_US_POSIX).
        public var formats: [String] = ["iso8601"]
        /// For a list of objects: the pointer to the text inside each.
        public var each: JSONPointer?
        /// The value is HTML and the field takes its text (`html: text`): entities decoded,
        /// markup removed, as WordPress's `title.rendered` and `excerpt.rendered` need.
        public var htmlText = false
    }

    /// Where the array of items is.
    public var items: JSONPointer
    public var rules: [Target: Rule]

    /// Galley's own article feed, `{"articles": [{"global_id", "title", ...}]}`, as
    /// `galley serve`'s /independent-articles answers and `galley import --articles` reads:
    /// every target from the member of its own name.
    public static let native: KeyMap = {
        var rules: [Target: Rule] = [:]
        for target in Target.allCases {
            rules[target] = Rule(from: [JSONPointer("/\(target.rawValue)")].compactMap { $0 })
        }
        return KeyMap(items: JSONPointer("/articles") ?? JSONPointer("")!, rules: rules)
    }()

    public init(items: JSONPointer, rules: [Target: Rule]) {
        self.items = items
        self.rules = rules
    }

    // MARK: Reading a map

    /// Reads and checks a key map file; errors name the file, line and column.
    public init(contentsOf path: String) throws {
        let text = try InputFile.text(path, what: "the key map", hint: "Give a key map YAML file (docs/key-maps.md).", notText: .configuration)
        try self.init(yaml: text, path: path)
    }

    public init(yaml text: String, path: String) throws {
        func fail(_ node: Node?, _ message: String, _ hint: String = "See docs/key-maps.md for the keys a map has.") -> GalleyError {
            let place = node?.mark.map { "\(path):\($0.line):\($0.column)" } ?? path
            return GalleyError(message, id: .configuration, path: place, hint: hint)
        }
        let root: Node
        do {
            // Through the same bounds as every YAML file Galley reads: a `default:` holds any
            // value, and aliases of aliases there expanded for ever (`key-map check` hung).
            guard let composed = try YAMLBudget.compose(text) else { throw fail(nil, "the key map is empty") }
            root = composed
        } catch let error as GalleyError {
            throw error
        } catch let error as YAMLBudget.Exceeded {
            let place = error.mark.map { "\(path):\($0.line):\($0.column)" } ?? path
            throw GalleyError("the key map's YAML \(error.reason)", id: .configuration, path: place,
                              hint: "Write the values out instead of nesting aliases (`*name`); a key map needs no anchors.")
        } catch {
            throw fail(nil, "the key map is not YAML: \(error)")
        }
        guard let top = root.mapping else { throw fail(root, "a key map is a mapping: galley_key_map, items, article") }
        var version: Node?
        var itemsNode: Node?
        var articleNode: Node?
        for (key, value) in top {
            switch key.string {
            case "galley_key_map": version = value
            case "items": itemsNode = value
            case "article": articleNode = value
            default: throw fail(key, "unknown key `\(key.string ?? "?")`", "A key map has galley_key_map, items and article.")
            }
        }
        guard let version, version.int == 1 else {
            throw fail(version ?? root, "the map must start with `galley_key_map: 1`", "1 is the only version of the key map format.")
        }
        func pointer(_ node: Node) throws -> JSONPointer {
            guard let text = node.string, let pointer = JSONPointer(text) else {
                throw fail(node, "`\(node.string ?? "?")` is not a JSON Pointer", "A pointer is empty (the whole item) or starts with /, e.g. /title/rendered.")
            }
            return pointer
        }
        items = try itemsNode.map(pointer) ?? JSONPointer("")!
        guard let article = articleNode?.mapping else {
            throw fail(articleNode ?? root, "the map needs `article:`, a mapping of article fields to rules",
                       "For example article: { global_id: { from: /id }, title: { from: /title } }.")
        }
        var rules: [Target: Rule] = [:]
        for (key, value) in article {
            guard let name = key.string, let target = Target(rawValue: name) else {
                let known = Target.allCases.map(\.rawValue).joined(separator: ", ")
                throw fail(key, "`\(key.string ?? "?")` is not an article field", "The fields are \(known).")
            }
            guard rules[target] == nil else { throw fail(key, "`\(name)` is mapped twice") }
            var rule = Rule(from: [])
            // A bare pointer is short for { from: pointer }.
            if value.string != nil {
                rule.from = [try pointer(value)]
                rules[target] = rule
                continue
            }
            guard let fields = value.mapping else { throw fail(value, "the rule for `\(name)` is a pointer or a mapping (from, default, formats, each)") }
            for (ruleKey, ruleValue) in fields {
                switch ruleKey.string {
                case "from":
                    rule.from = try (ruleValue.sequence.map { Array($0) } ?? [ruleValue]).map(pointer)
                case "default":
                    rule.defaultValue = Self.json(ruleValue)
                case "formats":
                    guard target.kind == .date else { throw fail(ruleKey, "`formats` is for dates; `\(name)` is not one") }
                    let list = (ruleValue.sequence.map { Array($0) } ?? [ruleValue]).compactMap(\.string)
                    guard !list.isEmpty else { throw fail(ruleValue, "`formats` lists date formats: iso8601, unix or a pattern") }
                    rule.formats = list
                case "each":
                    guard target.kind == .list else { throw fail(ruleKey, "`each` is for lists; `\(name)` is not one") }
                    rule.each = try pointer(ruleValue)
                case "html":
                    guard target.kind == .text, target != .body, target != .url, target != .globalID else {
                        throw fail(ruleKey, "`html: text` is for text fields (title, dek, section, type, author); `\(name)` is not one",
                                   "A body is HTML and is kept as HTML (sanitized); a url or global_id is taken as given.")
                    }
                    guard ruleValue.string == "text" else {
                        throw fail(ruleValue, "`html` takes `text`: the field gets the HTML's text, entities decoded")
                    }
                    rule.htmlText = true
                default:
                    throw fail(ruleKey, "unknown rule key `\(ruleKey.string ?? "?")`", "A rule has from, default, formats (dates), each (lists) and html (text fields).")
                }
            }
            guard !rule.from.isEmpty || rule.defaultValue != nil else {
                throw fail(value, "the rule for `\(name)` has neither `from` nor `default`")
            }
            rules[target] = rule
        }
        for target in Target.allCases where target.required && rules[target] == nil {
            throw fail(articleNode, "`\(target.rawValue)` is required and not mapped", "Every article needs global_id and title.")
        }
        self.rules = rules
    }

    private static func json(_ node: Node) -> JSONValue {
        switch node {
        case .scalar(let scalar):
            if scalar.style == .plain {
                if let bool = node.bool { return .bool(bool) }
                if node.int != nil || node.float != nil { return .number(scalar.string) }
                if scalar.string == "null" || scalar.string == "~" { return .null }
            }
            return .string(scalar.string)
        case .sequence(let items): return .array(items.map(json))
        case .mapping(let pairs): return .object(pairs.map { ($0.key.string ?? "", json($0.value)) })
        case .alias: return .null
        }
    }

    // MARK: Mapping a feed

    /// An item that was not mapped, and why: which item, its id when it had one, the pointer
    /// and the target.
    public struct Skipped: Sendable, Hashable, Encodable {
        public var index: Int
        @JSONNullable public var globalID: String?
        @JSONNullable public var pointer: String?
        public var target: String
        public var message: String

        enum CodingKeys: String, CodingKey {
            case index, pointer, target, message
            case globalID = "global_id"
        }
    }

    /// An item whose body lost markup a reader's article may not hold (`HTMLSanitizer`): the
    /// article is kept without it.
    public struct Sanitized: Sendable, Hashable, Encodable {
        public var index: Int
        public var globalID: String
        /// What went, as the sanitizer names it (`<script>`, `onerror on <img>`).
        public var removed: [String]

        enum CodingKeys: String, CodingKey {
            case index, removed
            case globalID = "global_id"
        }
    }

    public struct Result: Sendable {
        public var articles: [IndependentArticle] = []
        public var skipped: [Skipped] = []
        public var sanitized: [Sanitized] = []

        public init() {}
    }

    /// Maps every item of `document`. Throws only when there is no array of items at `items`.
    public func map(_ document: JSONValue, source: String) throws -> Result {
        guard case .array(let list) = items.resolve(in: document) else {
            throw GalleyError("\(source) has no array of items at `\(items.description.isEmpty ? "(the root)" : items.description)`",
                              id: .feedInvalid, path: source,
                              hint: "Point the map's `items` at the array that holds the articles (a JSON Pointer, empty for the root).")
        }
        var result = Result()
        var seen: [String: Int] = [:]
        let sanitizer = HTMLSanitizer(keepComment: { _ in false })
        for (index, item) in list.enumerated() {
            do {
                let article = try map(item)
                if let first = seen[article.globalID] {
                    throw Skipped(index: index, globalID: article.globalID, pointer: nil, target: Target.globalID.rawValue,
                                  message: "global_id `\(article.globalID)` is item \(first)'s too; the first is kept")
                }
                seen[article.globalID] = index
                // A foreign body goes through the sanitizer a rendered zip body goes through,
                // and is kept as it re-serialises (so nothing a browser parses otherwise than
                // libxml2 survives): serve hands it to reader apps as it is stored. Comments go
                // too, as an independent article has no asset placeholders.
                var clean = article
                let sanitized = sanitizer.sanitize(article.body)
                clean.body = sanitized.html
                if !sanitized.removed.isEmpty {
                    result.sanitized.append(Sanitized(index: index, globalID: article.globalID,
                                                      removed: Array(Set(sanitized.removed.map(\.what))).sorted()))
                }
                result.articles.append(clean)
            } catch var skipped as Skipped {
                skipped.index = index
                if skipped.globalID == nil, let rule = rules[.globalID] {
                    skipped.globalID = try? text(of: first(rule, in: item)?.value, rule: rule, target: .globalID, pointer: "")
                }
                result.skipped.append(skipped)
            }
        }
        return result
    }

    /// The first of a rule's pointers present in `item` (null counts as absent).
    private func first(_ rule: Rule, in item: JSONValue) -> (pointer: String, value: JSONValue)? {
        for pointer in rule.from {
            if let value = pointer.resolve(in: item), value != .null { return (pointer.description, value) }
        }
        return rule.defaultValue.map { ("default", $0) }
    }

    private func map(_ item: JSONValue) throws -> IndependentArticle {
        var values: [Target: (String, JSONValue)] = [:]
        for target in Target.allCases {
            guard let rule = rules[target] else { continue }
            if let found = first(rule, in: item) {
                values[target] = found
            } else if target.required {
                throw Skipped(index: 0, pointer: rule.from.map(\.description).joined(separator: ", "), target: target.rawValue,
                              message: "\(rule.from.map(\.description).joined(separator: " or ")) missing: \(target.rawValue) is required")
            }
        }
        func text(_ target: Target) throws -> String? {
            guard let (pointer, value) = values[target], let rule = rules[target] else { return nil }
            return try self.text(of: value, rule: rule, target: target, pointer: pointer)
        }
        guard let globalID = try text(.globalID), !globalID.isEmpty, globalID.utf8.count <= 255 else {
            throw Skipped(index: 0, pointer: values[.globalID]?.0, target: "global_id", message: "global_id is empty or over 255 bytes")
        }
        var article = IndependentArticle(globalID: globalID, title: try text(.title) ?? "")
        if article.title.isEmpty {
            throw Skipped(index: 0, globalID: globalID, pointer: values[.title]?.0, target: "title", message: "title is empty")
        }
        article.dek = try text(.dek) ?? ""
        article.section = try text(.section) ?? ""
        article.type = try text(.type) ?? "article"
        article.author = try text(.author) ?? ""
        article.body = try text(.body) ?? ""
        article.url = try text(.url) ?? ""
        if let (pointer, value) = values[.date], let rule = rules[.date] {
            article.date = try date(value, rule: rule, pointer: pointer, globalID: globalID)
        }
        if let (pointer, value) = values[.keywords], let rule = rules[.keywords] {
            article.keywords = try list(value, rule: rule, pointer: pointer, globalID: globalID)
        }
        if let (pointer, value) = values[.featured] {
            switch value {
            case .bool(let flag): article.featured = flag
            case .number(let n): article.featured = (Double(n) ?? 0) != 0
            case .string(let s) where ["true", "yes", "1"].contains(s.lowercased()): article.featured = true
            case .string(let s) where ["false", "no", "0", ""].contains(s.lowercased()): article.featured = false
            default:
                throw Skipped(index: 0, globalID: globalID, pointer: pointer, target: "featured", message: "\(pointer) is not true or false")
            }
        }
        return article
    }

    private func text(of value: JSONValue?, rule: Rule, target: Target, pointer: String) throws -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let s)?: return rule.htmlText ? HTMLParsing.plainText(s) : s
        case .number(let n)?: return n
        case .bool(let b)?: return b ? "true" : "false"
        default:
            throw Skipped(index: 0, pointer: pointer, target: target.rawValue,
                          message: "\(pointer) is an \(value.map(Self.kindName) ?? "?"), not text")
        }
    }

    private func list(_ value: JSONValue, rule: Rule, pointer: String, globalID: String) throws -> [String] {
        switch value {
        case .string(let s):
            return s.split(separator: ",").map { $0.trimmingWhitespaces() }.filter { !$0.isEmpty }
        case .array(let items):
            return try items.enumerated().compactMap { index, element in
                let inner = rule.each.map { $0.resolve(in: element) } ?? element
                switch inner {
                case .string(let s)?: return s
                case .number(let n)?: return n
                case nil, .null?: return nil
                default:
                    throw Skipped(index: 0, globalID: globalID, pointer: "\(pointer)/\(index)\(rule.each?.description ?? "")", target: "keywords",
                                  message: "a keyword is an \(inner.map(Self.kindName) ?? "?"), not text"
                                      + (rule.each == nil ? " (give `each:` the pointer to the text inside each)" : ""))
                }
            }
        default:
            throw Skipped(index: 0, globalID: globalID, pointer: pointer, target: "keywords", message: "\(pointer) is neither a list nor text")
        }
    }

    private func date(_ value: JSONValue, rule: Rule, pointer: String, globalID: String) throws -> String {
        for format in rule.formats {
            if let date = Self.parse(value, format: format) { return DumplingDate.rfc3339(date: date) }
        }
        let shown: String = switch value {
        case .string(let s): "`\(s)`"
        case .number(let n): n
        default: "an \(Self.kindName(value))"
        }
        throw Skipped(index: 0, globalID: globalID, pointer: pointer, target: "date",
                      message: "\(pointer) \(shown) matches none of the formats \(rule.formats.joined(separator: ", "))")
    }

    static func parse(_ value: JSONValue, format: String) -> Date? {
        switch (format, value) {
        case ("unix", .number(let n)), ("unix", .string(let n)):
            return Double(n).flatMap { $0.isFinite ? Date(timeIntervalSince1970: $0) : nil }
        case ("iso8601", .string(let s)):
            // With or without fractions; a time without a zone is read as UTC (WordPress's date_gmt).
            let zoned = s.hasSuffix("Z") || s.range(of: #"[+-]\d\d:?\d\d$"#, options: .regularExpression) != nil ? s : s + "Z"
            return (try? Date(zoned, strategy: .iso8601))
                ?? (try? Date(zoned, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
                ?? (s.count == 10 ? try? Date(s + "T00:00:00Z", strategy: .iso8601) : nil)
        case (_, .string(let s)) where format != "iso8601" && format != "unix":
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = format
            return formatter.date(from: s)
        default:
            return nil
        }
    }

    static func kindName(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "text"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension KeyMap.Skipped: Error {}
