/// A JSON value whose objects keep their keys in the order they were given, so that the
/// bytes Galley writes depend only on its input.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number kept as its JSON text (`12`, `-3.5`, `1e3`), so nothing is lost or reformatted.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func int(_ value: Int) -> JSONValue { .number(String(value)) }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.array(a), .array(b)): a == b
        case let (.object(a), .object(b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .number(let n): hasher.combine(n)
        case .string(let s): hasher.combine(s)
        case .array(let a): hasher.combine(a)
        case .object(let o):
            for (key, value) in o {
                hasher.combine(key)
                hasher.combine(value)
            }
        }
    }

    /// The value of `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
}

/// Writes JSON text: two-space indentation, `/` left unescaped, non-ASCII kept as UTF-8,
/// control characters escaped. The output of one value is always the same bytes.
public struct JSONWriter: Sendable {
    public var pretty: Bool

    public init(pretty: Bool = true) { self.pretty = pretty }

    public func encode(_ value: JSONValue) -> String {
        var out = ""
        write(value, into: &out, indent: 0)
        return out
    }

    public func write(_ value: JSONValue, into out: inout String, indent: Int) {
        switch value {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s): Self.appendQuoted(s, to: &out)
        case .array(let items):
            if items.isEmpty {
                out += "[]"
                return
            }
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                newline(&out, indent + 1)
                write(item, into: &out, indent: indent + 1)
            }
            newline(&out, indent)
            out += "]"
        case .object(let members):
            if members.isEmpty {
                out += "{}"
                return
            }
            out += "{"
            for (index, (key, item)) in members.enumerated() {
                if index > 0 { out += "," }
                newline(&out, indent + 1)
                Self.appendQuoted(key, to: &out)
                out += pretty ? ": " : ":"
                write(item, into: &out, indent: indent + 1)
            }
            newline(&out, indent)
            out += "}"
        }
    }

    /// Writes the line break and indentation that precede a member at `level`.
    public func newline(_ out: inout String, _ level: Int) {
        guard pretty else { return }
        out += "\n"
        out += String(repeating: "  ", count: level)
    }

    public static func appendQuoted(_ string: String, to out: inout String) {
        out += "\""
        var plainStart = string.unicodeScalars.startIndex
        var index = plainStart
        let scalars = string.unicodeScalars
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let escape: String?
            switch scalar {
            case "\"": escape = "\\\""
            case "\\": escape = "\\\\"
            case "\n": escape = "\\n"
            case "\r": escape = "\\r"
            case "\t": escape = "\\t"
            case "\u{08}": escape = "\\b"
            case "\u{0C}": escape = "\\f"
            case "\u{2028}": escape = "\\u2028"
            case "\u{2029}": escape = "\\u2029"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    escape = "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    escape = nil
                }
            }
            if let escape {
                out.unicodeScalars.append(contentsOf: scalars[plainStart..<index])
                out += escape
                plainStart = scalars.index(after: index)
            }
            index = scalars.index(after: index)
        }
        out.unicodeScalars.append(contentsOf: scalars[plainStart..<scalars.endIndex])
        out += "\""
    }
}
