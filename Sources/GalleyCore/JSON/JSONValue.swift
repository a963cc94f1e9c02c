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
/// Works on UTF-8 bytes, so a large document costs one pass and no string copies.
public struct JSONWriter: Sendable {
    public var pretty: Bool

    public init(pretty: Bool = true) { self.pretty = pretty }

    public func encode(_ value: JSONValue) -> String {
        var out: [UInt8] = []
        write(value, into: &out, indent: 0)
        return String(decoding: out, as: UTF8.self)
    }

    public func write(_ value: JSONValue, into out: inout [UInt8], indent: Int) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: n.utf8)
        case .string(let s): Self.appendQuoted(s, to: &out)
        case .array(let items):
            if items.isEmpty {
                out.append(contentsOf: "[]".utf8)
                return
            }
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent + 1)
                write(item, into: &out, indent: indent + 1)
            }
            newline(&out, indent)
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty {
                out.append(contentsOf: "{}".utf8)
                return
            }
            out.append(UInt8(ascii: "{"))
            for (index, (key, item)) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent + 1)
                Self.appendQuoted(key, to: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                write(item, into: &out, indent: indent + 1)
            }
            newline(&out, indent)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Writes the line break and indentation that precede a member at `level`.
    public func newline(_ out: inout [UInt8], _ level: Int) {
        guard pretty else { return }
        out.append(10)
        for _ in 0..<(level * 2) { out.append(32) }
    }

    public static func appendQuoted(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var plainStart = 0
            var index = 0
            let count = bytes.count
            while index < count {
                let byte = bytes[index]
                // Most bytes need nothing: skip them before the switch (the bodies of a
                // 30,000-article latest.json are 100 MB of them).
                if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") && byte != 0xE2 {
                    index += 1
                    continue
                }
                var escape: StaticString?
                var length = 1
                switch byte {
                case UInt8(ascii: "\""): escape = "\\\""
                case UInt8(ascii: "\\"): escape = "\\\\"
                case 0x0A: escape = "\\n"
                case 0x0D: escape = "\\r"
                case 0x09: escape = "\\t"
                case 0x08: escape = "\\b"
                case 0x0C: escape = "\\f"
                case 0xE2 where index + 2 < count && bytes[index + 1] == 0x80 && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
                    // U+2028 and U+2029 end lines in JavaScript: escape them too.
                    escape = bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029"
                    length = 3
                default:
                    if byte < 0x20 {
                        out.append(contentsOf: bytes[plainStart..<index])
                        let digits = Array("0123456789abcdef".utf8)
                        out.append(contentsOf: "\\u00".utf8)
                        out.append(digits[Int(byte >> 4)])
                        out.append(digits[Int(byte & 0xF)])
                        plainStart = index + 1
                    }
                }
                if let escape {
                    out.append(contentsOf: bytes[plainStart..<index])
                    escape.withUTF8Buffer { out.append(contentsOf: $0) }
                    plainStart = index + length
                }
                index += length
            }
            out.append(contentsOf: bytes[plainStart..<count])
        }
        out.append(UInt8(ascii: "\""))
    }
}
