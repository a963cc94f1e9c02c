/// A JSON document parsed with the line and column of every value, for findings that point
/// into `latest.json`. Strict RFC 8259; nesting deeper than `maxDepth` is refused.
public struct LocatedJSON: Sendable {
    public indirect enum Value: Sendable {
        case null
        case bool(Bool)
        case number(String)
        case string(String)
        case array([LocatedJSON])
        case object([Member])
    }

    public struct Member: Sendable {
        public var key: String
        public var keyLine: Int
        public var value: LocatedJSON
    }

    public var value: Value
    public var line: Int
    public var column: Int

    public subscript(key: String) -> LocatedJSON? {
        guard case .object(let members) = value else { return nil }
        return members.last { $0.key == key }?.value
    }

    public var string: String? {
        if case .string(let s) = value { return s }
        return nil
    }

    public var members: [Member]? {
        if case .object(let m) = value { return m }
        return nil
    }

    public var items: [LocatedJSON]? {
        if case .array(let a) = value { return a }
        return nil
    }

    /// The JSON type's name as a reader would say it.
    public var typeName: String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    public struct ParseError: Error, Sendable {
        public var message: String
        public var line: Int
        public var column: Int
    }

    public static let maxDepth = 256

    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> LocatedJSON {
        var parser = Parser(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw ParseError(message: "starts with a byte-order mark", line: 1, column: 1)
        }
        parser.skipSpace()
        let value = try parser.parseValue(depth: 0)
        parser.skipSpace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    struct Parser {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        var lineStart = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        var column: Int { index - lineStart + 1 }

        func error(_ message: String) -> ParseError { ParseError(message: message, line: line, column: column) }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0D: index += 1
                case 0x0A:
                    index += 1
                    line += 1
                    lineStart = index
                default: return
                }
            }
        }

        mutating func parseValue(depth: Int) throws(ParseError) -> LocatedJSON {
            guard depth < LocatedJSON.maxDepth else { throw error("nested deeper than \(LocatedJSON.maxDepth) levels") }
            guard index < bytes.count else { throw error("the text ends where a value was expected") }
            let (startLine, startColumn) = (line, column)
            func located(_ value: Value) -> LocatedJSON { LocatedJSON(value: value, line: startLine, column: startColumn) }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [Member] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return located(.object(members))
                }
                while true {
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                        throw error("expected a key in double quotes")
                    }
                    let keyLine = line
                    let key = try parseString()
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected `:` after a key") }
                    index += 1
                    skipSpace()
                    let value = try parseValue(depth: depth + 1)
                    members.append(Member(key: key, keyLine: keyLine, value: value))
                    skipSpace()
                    guard index < bytes.count else { throw error("the text ends inside an object") }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    guard bytes[index] == UInt8(ascii: "}") else { throw error("expected `,` or `}` in an object") }
                    index += 1
                    return located(.object(members))
                }
            case UInt8(ascii: "["):
                index += 1
                var items: [LocatedJSON] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return located(.array(items))
                }
                while true {
                    skipSpace()
                    items.append(try parseValue(depth: depth + 1))
                    skipSpace()
                    guard index < bytes.count else { throw error("the text ends inside an array") }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    guard bytes[index] == UInt8(ascii: "]") else { throw error("expected `,` or `]` in an array") }
                    index += 1
                    return located(.array(items))
                }
            case UInt8(ascii: "\""):
                return located(.string(try parseString()))
            case UInt8(ascii: "t"):
                try literal("true")
                return located(.bool(true))
            case UInt8(ascii: "f"):
                try literal("false")
                return located(.bool(false))
            case UInt8(ascii: "n"):
                try literal("null")
                return located(.null)
            default:
                return located(.number(try parseNumber()))
            }
        }

        mutating func literal(_ word: String) throws(ParseError) {
            let utf8 = Array(word.utf8)
            guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
                throw error("unexpected character")
            }
            index += utf8.count
        }

        mutating func parseNumber() throws(ParseError) -> String {
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digitsStart = index
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
            guard index > digitsStart else { throw error("unexpected character") }
            if bytes[digitsStart] == 48 && index - digitsStart > 1 { throw error("a number has a leading zero") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                let fractionStart = index
                while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
                guard index > fractionStart else { throw error("a number has no digits after `.`") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                let exponentStart = index
                while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
                guard index > exponentStart else { throw error("a number has no exponent digits") }
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func parseString() throws(ParseError) -> String {
            index += 1  // opening quote
            var out: [UInt8] = []
            var plainStart = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    out.append(contentsOf: bytes[plainStart..<index])
                    index += 1
                    guard let text = String(validating: out, as: UTF8.self) else {
                        throw error("a string is not valid UTF-8")
                    }
                    return text
                }
                if byte < 0x20 { throw error("a string contains an unescaped control character") }
                if byte == UInt8(ascii: "\\") {
                    out.append(contentsOf: bytes[plainStart..<index])
                    index += 1
                    guard index < bytes.count else { break }
                    switch bytes[index] {
                    case UInt8(ascii: "\""): out.append(0x22)
                    case UInt8(ascii: "\\"): out.append(0x5C)
                    case UInt8(ascii: "/"): out.append(0x2F)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "\\"),
                                  bytes[index + 2] == UInt8(ascii: "u")
                            else { throw error("a lone surrogate in a \\u escape") }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate in a \\u escape") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(scalar) {
                            throw error("a lone surrogate in a \\u escape")
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw error("an invalid \\u escape") }
                        out.append(contentsOf: Array(String(Character(unicode)).utf8))
                    default:
                        throw error("an invalid escape sequence")
                    }
                    index += 1
                    plainStart = index
                    continue
                }
                index += 1
            }
            throw error("a string is not closed")
        }

        /// Reads the 4 hex digits after `\u` (index is on the `u`); leaves index on the last digit.
        mutating func hex4() throws(ParseError) -> UInt32 {
            guard index + 4 < bytes.count else { throw error("an incomplete \\u escape") }
            var value: UInt32 = 0
            for offset in 1...4 {
                let c = bytes[index + offset]
                let digit: UInt32
                switch c {
                case 48...57: digit = UInt32(c - 48)
                case 65...70: digit = UInt32(c - 55)
                case 97...102: digit = UInt32(c - 87)
                default: throw error("an invalid \\u escape")
                }
                value = value << 4 | digit
            }
            index += 4
            return value
        }
    }
}
