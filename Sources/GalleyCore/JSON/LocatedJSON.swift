import Foundation

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

        package init(key: String, keyLine: Int, value: LocatedJSON) {
            self.key = key
            self.keyLine = keyLine
            self.value = value
        }
    }

    public var value: Value
    public var line: Int
    public var column: Int

    package init(value: Value, line: Int, column: Int) {
        self.value = value
        self.line = line
        self.column = column
    }

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

        package init(message: String, line: Int, column: Int) {
            self.message = message
            self.line = line
            self.column = column
        }
    }

    public static let maxDepth = 256

    /// Parses a whole document held in memory.
    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> LocatedJSON {
        var delivered = false
        var parser = Parser { () -> [UInt8]? in
            defer { delivered = true }
            return delivered ? nil : bytes
        }
        return try parser.parseDocument()
    }

    /// A pull parser over chunks of input: `next` hands out the document a chunk at a time (or
    /// `nil` at the end), so a document of any size is parsed in the memory of its largest
    /// value. `parseDocument` reads one value; `ManifestStream` walks the top level itself.
    public struct Parser {
        private var chunk: [UInt8] = []
        private var position = 0
        private var consumed = 0
        private let next: () throws -> [UInt8]?
        private var ended = false
        package private(set) var line = 1
        private var lineStart = 0
        /// An error raised by `next` itself (a damaged zip entry), kept for the caller.
        public private(set) var sourceError: Error?
        /// Keys given a second time in one object (the first 100; `duplicateKeyCount` counts
        /// all). JSON leaves their meaning open: Galley's reader takes the last, other readers
        /// the first, so a value checked here could differ from the one used there.
        public private(set) var duplicateKeys: [(key: String, line: Int, column: Int)] = []
        public private(set) var duplicateKeyCount = 0

        /// Notes `key` (just parsed, ending before the current position) when `members` has it.
        private mutating func noteDuplicate(_ key: String, line keyLine: Int, column keyColumn: Int, in members: [Member], seen: inout Set<String>?) {
            // A linear scan for the small objects of a manifest; a set once an object grows.
            let repeated: Bool
            if members.count < 16 {
                repeated = members.contains { $0.key == key }
            } else {
                if seen == nil { seen = Set(members.map(\.key)) }
                repeated = !(seen?.insert(key).inserted ?? true)
            }
            if repeated { recordDuplicate(key, line: keyLine, column: keyColumn) }
        }

        private mutating func recordDuplicate(_ key: String, line keyLine: Int, column keyColumn: Int) {
            duplicateKeyCount += 1
            if duplicateKeys.count < 100 { duplicateKeys.append((key, keyLine, keyColumn)) }
        }

        public init(next: @escaping () throws -> [UInt8]?) { self.next = next }

        package var offset: Int { consumed + position }
        package var column: Int { offset - lineStart + 1 }

        package func error(_ message: String) -> ParseError { ParseError(message: message, line: line, column: column) }

        /// The byte at the current position, refilling as needed; `nil` at the end.
        package mutating func peek() -> UInt8? {
            while position >= chunk.count {
                if ended { return nil }
                consumed += chunk.count
                position = 0
                do {
                    guard let more = try next() else {
                        ended = true
                        chunk = []
                        return nil
                    }
                    chunk = more
                } catch {
                    sourceError = error
                    ended = true
                    chunk = []
                    return nil
                }
            }
            return chunk[position]
        }

        mutating func advance() {
            if chunk[position] == 0x0A {
                line += 1
                lineStart = offset + 1
            }
            position += 1
        }

        public mutating func parseDocument() throws(ParseError) -> LocatedJSON {
            if peek() == 0xEF { throw ParseError(message: "starts with a byte-order mark", line: 1, column: 1) }
            skipSpace()
            let value = try parseValue(depth: 0)
            try expectEnd()
            return value
        }

        public mutating func expectEnd() throws(ParseError) {
            skipSpace()
            guard peek() == nil else { throw error("unexpected text after the JSON value") }
        }

        public mutating func skipSpace() {
            while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A { advance() }
        }

        /// Consumes `byte` (after white space) or fails with `message`.
        public mutating func expect(_ byte: UInt8, _ message: String) throws(ParseError) {
            skipSpace()
            guard peek() == byte else { throw error(message) }
            advance()
        }

        /// After white space: consumes `byte` if it is next.
        public mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard peek() == byte else { return false }
            advance()
            return true
        }

        /// Walks an object member by member (the parser must be at `{`). The first member named
        /// `streamed` whose value is an array has its elements handed to `element` one at a time,
        /// as they are parsed, and reaches `member` as an empty array at its place; every other
        /// member is parsed whole and handed to `member`. This is how latest.json is read in the
        /// memory of one article. Throws `ParseError`, or what the closures throw.
        public mutating func walkObject(
            streaming streamed: String, member: (Member) throws -> Void, element: (LocatedJSON) throws -> Void
        ) throws {
            try expect(UInt8(ascii: "{"), "expected an object")
            if take(UInt8(ascii: "}")) { return }
            var didStream = false
            var keys = Set<String>()
            while true {
                skipSpace()
                let keyColumn = column
                let (key, keyLine) = try parseKey()
                if !keys.insert(key).inserted { recordDuplicate(key, line: keyLine, column: keyColumn) }
                if key == streamed && !didStream && peek() == UInt8(ascii: "[") {
                    didStream = true
                    let (startLine, startColumn) = (line, column)
                    advance()
                    if !take(UInt8(ascii: "]")) {
                        while true {
                            try element(try parseValue(depth: 1))
                            if take(UInt8(ascii: ",")) { continue }
                            try expect(UInt8(ascii: "]"), "expected `,` or `]` in an array")
                            break
                        }
                    }
                    try member(Member(key: key, keyLine: keyLine,
                                      value: LocatedJSON(value: .array([]), line: startLine, column: startColumn)))
                } else {
                    try member(Member(key: key, keyLine: keyLine, value: try parseValue(depth: 1)))
                }
                if take(UInt8(ascii: ",")) { continue }
                try expect(UInt8(ascii: "}"), "expected `,` or `}` in an object")
                return
            }
        }

        public mutating func parseKey() throws(ParseError) -> (key: String, line: Int) {
            skipSpace()
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a key in double quotes") }
            let keyLine = line
            let key = try parseString()
            try expect(UInt8(ascii: ":"), "expected `:` after a key")
            skipSpace()
            return (key, keyLine)
        }

        public mutating func parseValue(depth: Int) throws(ParseError) -> LocatedJSON {
            guard depth < LocatedJSON.maxDepth else { throw error("nested deeper than \(LocatedJSON.maxDepth) levels") }
            skipSpace()
            guard let byte = peek() else { throw error("the text ends where a value was expected") }
            let (startLine, startColumn) = (line, column)
            func located(_ value: Value) -> LocatedJSON { LocatedJSON(value: value, line: startLine, column: startColumn) }
            switch byte {
            case UInt8(ascii: "{"):
                advance()
                var members: [Member] = []
                var seen: Set<String>?
                if take(UInt8(ascii: "}")) { return located(.object(members)) }
                while true {
                    skipSpace()
                    let keyColumn = column
                    let (key, keyLine) = try parseKey()
                    noteDuplicate(key, line: keyLine, column: keyColumn, in: members, seen: &seen)
                    let value = try parseValue(depth: depth + 1)
                    members.append(Member(key: key, keyLine: keyLine, value: value))
                    if take(UInt8(ascii: ",")) { continue }
                    try expect(UInt8(ascii: "}"), "expected `,` or `}` in an object")
                    return located(.object(members))
                }
            case UInt8(ascii: "["):
                advance()
                var items: [LocatedJSON] = []
                if take(UInt8(ascii: "]")) { return located(.array(items)) }
                while true {
                    items.append(try parseValue(depth: depth + 1))
                    if take(UInt8(ascii: ",")) { continue }
                    try expect(UInt8(ascii: "]"), "expected `,` or `]` in an array")
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

        package mutating func literal(_ word: String) throws(ParseError) {
            for expected in word.utf8 {
                guard peek() == expected else { throw error("unexpected character") }
                advance()
            }
        }

        package mutating func digits() -> [UInt8] {
            var out: [UInt8] = []
            while let byte = peek(), byte >= 48, byte <= 57 {
                out.append(byte)
                advance()
            }
            return out
        }

        mutating func parseNumber() throws(ParseError) -> String {
            var text: [UInt8] = []
            if peek() == UInt8(ascii: "-") {
                text.append(UInt8(ascii: "-"))
                advance()
            }
            let integer = digits()
            guard !integer.isEmpty else { throw error("unexpected character") }
            if integer.first == 48 && integer.count > 1 { throw error("a number has a leading zero") }
            text += integer
            if peek() == UInt8(ascii: ".") {
                advance()
                let fraction = digits()
                guard !fraction.isEmpty else { throw error("a number has no digits after `.`") }
                text += [UInt8(ascii: ".")] + fraction
            }
            if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
                advance()
                text.append(e)
                if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                    text.append(sign)
                    advance()
                }
                let exponent = digits()
                guard !exponent.isEmpty else { throw error("a number has no exponent digits") }
                text += exponent
            }
            return String(decoding: text, as: UTF8.self)
        }

        mutating func parseString() throws(ParseError) -> String {
            advance()  // opening quote
            var out: [UInt8] = []
            while true {
                // Copy runs of plain bytes from the current chunk at once.
                guard peek() != nil else { throw error("a string is not closed") }
                var end = position
                while end < chunk.count {
                    let b = chunk[end]
                    if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b < 0x20 { break }
                    end += 1
                }
                if end > position {
                    if out.isEmpty, end < chunk.count, chunk[end] == UInt8(ascii: "\"") {
                        // The whole string, without escapes, in this chunk (most of them): made
                        // from the chunk itself, without a copy of its own first.
                        let text = Self.validUTF8(chunk[position..<end])
                        position = end
                        advance()  // closing quote
                        guard let text else { throw error("a string is not valid UTF-8") }
                        return text
                    }
                    out.append(contentsOf: chunk[position..<end])
                    position = end
                    continue
                }
                let byte = chunk[position]
                if byte == UInt8(ascii: "\"") {
                    advance()
                    guard let text = Self.validUTF8(out[...]) else {
                        throw error("a string is not valid UTF-8")
                    }
                    return text
                }
                if byte < 0x20 { throw error("a string contains an unescaped control character") }
                advance()  // backslash
                guard let escape = peek() else { throw error("a string is not closed") }
                switch escape {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    advance()
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard take(UInt8(ascii: "\\")), peek() == UInt8(ascii: "u") else {
                            throw error("a lone surrogate in a \\u escape")
                        }
                        advance()
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate in a \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw error("a lone surrogate in a \\u escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("an invalid \\u escape") }
                    out.append(contentsOf: Array(String(Character(unicode)).utf8))
                    continue
                default:
                    throw error("an invalid escape sequence")
                }
                advance()
            }
        }

        /// `bytes` as a string when they are valid UTF-8, else nil. `String(validating:as:)` is
        /// generic over the encoding and, not specialised for UTF-8, looked up type metadata on
        /// every call: 7% of the thread that reads latest.json for an import's rows. Decoding
        /// is the standard library's fast path for UTF-8 and changes the bytes only where they
        /// are not valid (each bad sequence becomes U+FFFD), so the bytes compared back tell.
        /// Not the lengths alone: a 4-byte sequence cut after 3 bytes is 3 bytes of U+FFFD.
        static func validUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
            var text = String(decoding: bytes, as: UTF8.self)
            // memcmp: comparing through the UTF-8 view, element by element, cost more than
            // the lookups it replaced.
            let same = text.withUTF8 { decoded in
                bytes.withUnsafeBufferPointer { original in
                    guard decoded.count == original.count else { return false }
                    guard let a = decoded.baseAddress, let b = original.baseAddress else { return true }  // both empty
                    return memcmp(a, b, decoded.count) == 0
                }
            }
            return same ? text : nil
        }

        /// Reads 4 hex digits and moves past them.
        mutating func hex4() throws(ParseError) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let c = peek() else { throw error("an incomplete \\u escape") }
                let digit: UInt32
                switch c {
                case 48...57: digit = UInt32(c - 48)
                case 65...70: digit = UInt32(c - 55)
                case 97...102: digit = UInt32(c - 87)
                default: throw error("an invalid \\u escape")
                }
                value = value << 4 | digit
                advance()
            }
            return value
        }
    }
}
