import Foundation
import Yams
import GalleyCore

/// Parses a YAML (or JSON) text and reads typed fields from it, turning every problem into a
/// diagnostic located at the file, line and column, with the key path of the value.
struct YAMLFields {
    /// The display path of the file (relative to the issue folder).
    package let file: String
    /// Lines before the YAML text in its file (front matter starts after `---`).
    package let lineOffset: Int

    /// Parses `text`. Returns `nil` and logs an error when it is not valid YAML.
    package func parse(_ text: String, into log: inout DiagnosticLog) -> Node? {
        do {
            return try YAMLBudget.compose(text)
        } catch let error as YAMLBudget.Exceeded {
            log.add(Diagnostic(.sourceYamlExpansion, "the YAML \(error.reason)", at: at(error.mark),
                               hint: "Issue sources hold a few thousand values: keep bulk data out of issue.yaml and front matter (in the article's body or a media file), and write aliases (`*name`) out instead of nesting them."))
            return nil
        } catch let error as YamlError {
            log.add(diagnostic(for: error, text: text))
            return nil
        } catch {
            log.add(Diagnostic(.sourceYamlInvalid, "cannot be parsed: \(error)", at: SourceLocation(path: file)))
            return nil
        }
    }

    private func diagnostic(for error: YamlError, text: String) -> Diagnostic {
        let hint = "Check the indentation and quoting near that line; a value containing `: ` or `#` must be quoted."
        switch error {
        case let .scanner(_, problem, mark, _), let .parser(_, problem, mark, _), let .composer(_, problem, mark, _):
            // A quote left open runs on to the next quote, lines further down, where libyaml
            // notices: point at where it opened instead.
            if let open = Self.unclosedQuote(in: text, before: mark.line) {
                return Diagnostic(
                    .sourceYamlInvalid, "invalid YAML: the \(open.quote == "\"" ? "double" : "single") quote opened here is not closed on its line "
                        + "(libyaml stopped at line \(mark.line + lineOffset): \(problem))",
                    at: SourceLocation(path: file, line: open.line + lineOffset, column: open.column),
                    hint: "Close the quote at the end of the value, or leave the quotes out (a value holding `: ` or `#` needs them); a quote inside the value is written \(open.quote == "\"" ? "\\\"" : "''").")
            }
            return Diagnostic(
                .sourceYamlInvalid, "invalid YAML: \(problem)", at: at(mark), hint: hint)
        case let .duplicatedKeysInMapping(duplicates, context):
            // Yams marks the mapping; point at the second occurrence of the key instead.
            var location = at(context.mark)
            if let key = duplicates.first {
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                let hits = lines.indices.filter { index in
                    let line = lines[index].drop { $0 == " " || $0 == "-" }
                    return line.hasPrefix(key + ":") || line.hasPrefix("\"\(key)\":")
                }
                if hits.count >= 2 {
                    location = SourceLocation(path: file, line: hits[1] + 1 + lineOffset, column: 1)
                }
            }
            return Diagnostic(
                .sourceYamlDuplicateKey,
                "the key \(duplicates.map { "`\($0)`" }.joined(separator: ", ")) is given more than once",
                at: location, hint: "Keep one of them: YAML keys must be unique in a mapping.")
        case let .reader(problem, _, _, _):
            return Diagnostic(.sourceYamlInvalid, "cannot read the text: \(problem)", at: SourceLocation(path: file),
                          hint: "Save the file as UTF-8.")
        default:
            return Diagnostic(.sourceYamlInvalid, "invalid YAML: \(error)", at: SourceLocation(path: file), hint: hint)
        }
    }

    /// The first line before `line` (1-based, in `text`) whose value opens a quote that the
    /// line does not close: its line, the quote's column (1-based) and the quote. A quoted
    /// value may span lines in YAML, but in front matter and issue.yaml one that does is
    /// almost always a forgotten closing quote, and is only looked for once parsing failed.
    static func unclosedQuote(in text: String, before line: Int) -> (line: Int, column: Int, quote: Character)? {
        for (index, content) in text.split(separator: "\n", omittingEmptySubsequences: false).prefix(max(0, line - 1)).enumerated() {
            let chars = Array(content)
            // The value: after `key: ` or a list item's `- `, past spaces.
            var start = 0
            while start < chars.count, chars[start] == " " { start += 1 }
            guard start < chars.count, chars[start] != "#" else { continue }
            if chars[start] == "-", start + 1 < chars.count, chars[start + 1] == " " {
                start += 2
            } else if let colon = (start..<max(start, chars.count - 1)).first(where: { chars[$0] == ":" && chars[$0 + 1] == " " }) {
                start = colon + 2
            } else {
                continue
            }
            while start < chars.count, chars[start] == " " { start += 1 }
            guard start < chars.count, chars[start] == "\"" || chars[start] == "'" else { continue }
            let quote = chars[start]
            var position = start + 1
            var closed = false
            while position < chars.count {
                if quote == "\"", chars[position] == "\\" {
                    position += 2
                    continue
                }
                if chars[position] == quote {
                    // In single quotes, '' is a quote inside the value.
                    if quote == "'", position + 1 < chars.count, chars[position + 1] == "'" {
                        position += 2
                        continue
                    }
                    closed = true
                    break
                }
                position += 1
            }
            if !closed { return (index + 1, start + 1, quote) }
        }
        return nil
    }

    package func at(_ mark: Mark?, _ keyPath: String? = nil) -> SourceLocation {
        SourceLocation(
            path: file, line: mark.map { $0.line + lineOffset }, column: mark?.column, jsonPath: keyPath)
    }

    package func at(_ node: Node?, _ keyPath: String? = nil) -> SourceLocation { at(node?.mark, keyPath) }
}

/// A YAML mapping being read: remembers which keys were read so the rest can be reported.
struct YAMLMapping {
    package let node: Node
    package let fields: YAMLFields
    let keyPath: String
    /// The mapping's keys as text, their nodes and their values, index for index. Three arrays,
    /// not one of tuples: a lookup compares strings only and copies one `Node` (each copy of a
    /// Yams node is several reference counts; scanning tuples copied every entry it passed,
    /// 0.25 s of packing 30,000 articles).
    private var keys: [String] = []
    private var keyNodes: [Node] = []
    private var values: [Node] = []

    package init?(_ node: Node, fields: YAMLFields, keyPath: String, log: inout DiagnosticLog, what: String) {
        guard case .mapping(let mapping) = node else {
            log.add(Diagnostic(
                .sourceTypeMismatch, "\(what) must be a mapping of keys to values",
                at: fields.at(node, keyPath.isEmpty ? nil : keyPath)))
            return nil
        }
        self.node = node
        self.fields = fields
        self.keyPath = keyPath
        keys.reserveCapacity(mapping.count)
        keyNodes.reserveCapacity(mapping.count)
        values.reserveCapacity(mapping.count)
        for (key, value) in mapping {
            keys.append(key.string ?? "")
            keyNodes.append(key)
            values.append(value)
        }
    }

    package func path(_ key: String) -> String { keyPath.isEmpty ? key : keyPath + "." + key }

    package func value(_ key: String) -> Node? {
        guard let index = keys.firstIndex(of: key) else { return nil }
        let value = values[index]
        if case .scalar(let scalar) = value, scalar.style == .plain, value.null != nil { return nil }
        return value
    }

    package func has(_ key: String) -> Bool { value(key) != nil }

    /// Text of a scalar field. Numbers and dates are read as written; lists and mappings are errors.
    package func string(_ key: String, required: Bool = false, log: inout DiagnosticLog, hint: String? = nil) -> String? {
        guard let value = value(key) else {
            if required {
                log.add(Diagnostic(
                    .sourceFieldMissing, "the required field `\(key)` is missing",
                    at: fields.at(node, keyPath.isEmpty ? key : path(key)),
                    hint: hint ?? "Add `\(key): ...` to this file."))
            }
            return nil
        }
        guard case .scalar(let scalar) = value else {
            log.add(Diagnostic(
                .sourceTypeMismatch, "`\(key)` must be text, not a list or mapping",
                at: fields.at(value, path(key))))
            return nil
        }
        return scalar.string
    }

    package func bool(_ key: String, log: inout DiagnosticLog) -> Bool? {
        guard let value = value(key) else { return nil }
        if case .scalar(let scalar) = value, scalar.style == .plain, let flag = value.bool { return flag }
        log.add(Diagnostic(
            .sourceTypeMismatch, "`\(key)` must be true or false", at: fields.at(value, path(key)),
            hint: "Write `\(key): true` or `\(key): false` without quotes."))
        return nil
    }

    package func date(_ key: String, required: Bool = false, log: inout DiagnosticLog) -> ISODateTime? {
        guard let text = string(key, required: required, log: &log,
                                hint: "Add `\(key): 2015-01-01` (an ISO 8601 date) to this file.")
        else { return nil }
        guard let date = ISODateTime(parsing: text) else {
            log.add(Diagnostic(
                .sourceDateInvalid, "`\(key)` is not an ISO 8601 date: `\(text)`",
                at: fields.at(value(key), path(key)),
                hint: "Write a date like 2015-01-01 or a date-time like 2015-01-01T10:00:00Z."))
            return nil
        }
        return date
    }

    /// A list of strings, or one comma-separated string.
    func stringList(_ key: String, log: inout DiagnosticLog) -> [String]? {
        guard let value = value(key) else { return nil }
        switch value {
        case .scalar(let scalar):
            return scalar.string.split(separator: ",").map { $0.trimmingWhitespaces() }
                .filter { !$0.isEmpty }
        case .sequence(let items):
            var out: [String] = []
            for (index, item) in items.enumerated() {
                guard case .scalar(let scalar) = item else {
                    log.add(Diagnostic(
                        .sourceTypeMismatch, "`\(key)` must be a list of texts",
                        at: fields.at(item, "\(path(key))[\(index)]")))
                    continue
                }
                out.append(scalar.string.trimmingWhitespaces())
            }
            return out
        default:
            log.add(Diagnostic(
                .sourceTypeMismatch, "`\(key)` must be a list of texts", at: fields.at(value, path(key))))
            return nil
        }
    }

    /// A free-form mapping, converted to JSON (scalars typed the YAML way, key order kept).
    func jsonObject(_ key: String, log: inout DiagnosticLog) -> JSONValue? {
        guard let value = value(key) else { return nil }
        guard case .mapping = value else {
            log.add(Diagnostic(
                .sourceTypeMismatch, "`\(key)` must be a mapping of keys to values",
                at: fields.at(value, path(key)), hint: "Write each entry on its own line as `name: value`."))
            return nil
        }
        return YAMLFields.json(from: value)
    }

    /// Reports every key that is not in `known`, with a suggestion when one is close.
    func reportUnknownKeys(_ known: [String], log: inout DiagnosticLog, what: String) {
        for (index, key) in keys.enumerated() where !known.contains(key) {
            var hint = "Remove it, or check its spelling."
            if let suggestion = nearest(to: key, among: known, within: 2) {
                hint = "Did you mean `\(suggestion)`?"
            }
            log.add(Diagnostic(
                .sourceUnknownKey, "unknown key `\(key)` in \(what); it is ignored",
                at: fields.at(keyNodes[index], path(key)), hint: hint))
        }
    }
}

extension YAMLFields {
    /// Converts a YAML node into JSON: plain scalars become null, booleans and numbers the way
    /// YAML reads them; quoted scalars, dates and everything else stay text.
    package static func json(from node: Node) -> JSONValue {
        switch node {
        case .scalar(let scalar):
            guard scalar.style == .plain else { return .string(scalar.string) }
            if node.null != nil { return .null }
            if let flag = node.bool { return .bool(flag) }
            if let int = node.int { return .int(int) }
            if node.float != nil, let number = jsonNumber(scalar.string) { return .number(number) }
            return .string(scalar.string)
        case .sequence(let items):
            return .array(items.map { json(from: $0) })
        case .mapping(let mapping):
            return .object(mapping.map { ($0.key.string ?? "", json(from: $0.value)) })
        case .alias:
            return .null
        }
    }

    /// The text of a YAML float as a JSON number, or `nil` for `.inf` and `.nan`.
    static func jsonNumber(_ text: String) -> String? {
        guard let value = Double(text), value.isFinite else { return nil }
        return isJSONNumber(text) ? text : String(value)
    }

    /// Whether `text` is already a JSON number literal (`-?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?`).
    static func isJSONNumber(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { $0 >= 48 && $0 <= 57 }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        if bytes.first == UInt8(ascii: "0") {
            bytes = bytes.dropFirst()
        } else if digits() == 0 {
            return false
        }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            if digits() == 0 { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            if digits() == 0 { return false }
        }
        return bytes.isEmpty
    }
}

