import Foundation

/// One JSON document of Galley's output contract (docs/json.md): an object with
/// `schema_version` beside the command's own keys, snake_case keys, sorted, two-space
/// indentation, `/` unescaped. Every `--json` output and `validate --format json` goes through
/// here, so the contract is kept in one place.
public enum JSONDocument {
    /// Bumped only for a change that can break a reader (a key removed or renamed, a type
    /// changed); new keys may appear within a version.
    public static let schemaVersion = 1

    /// The document for `body`, whose encoding must be a keyed container (an object).
    public static func encode<Body: Encodable>(_ body: Body) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(Versioned(body: body)), as: UTF8.self) + "\n"
        } catch {
            // Galley's own output types always encode; should one fail, the document still
            // keeps the contract and says so.
            return encode(ErrorDocument(GalleyError("the output could not be encoded as JSON: \(error)")))
        }
    }

    /// The document `{"<key>": [items]}` (`encode` of a body with that one key), written
    /// through `write` piece by piece as `produce` hands over its items, the same bytes as
    /// `encode` makes of the whole list: a listing of any length in the memory of one item.
    /// `key` must sort before `schema_version` (the keys are sorted).
    ///
    /// Nothing is written before the first item, so an error thrown before it leaves the
    /// output empty for the caller's own error document. An error thrown after it still ends
    /// one document: the list closes with the items written, the error follows beside it as
    /// an error document's `error` (`{"<key>": [...], "error": {...}, "schema_version": 1}`),
    /// and `ListEndedByError` is thrown, so the caller reports it without a second document.
    /// Returns how many items were written.
    /// (The error follows the list even where `key` sorts after `error`: the one place that
    /// comes first in the document's key order, since the list was written before.)
    ///
    /// `trailing` gives the document's other members once the list has ended (`produce` may
    /// learn them as it goes), written after it (and the error): their keys must sort after
    /// `key` and `error`, in order, and before `schema_version` (`issue show`'s `issue` after
    /// its `articles`).
    @discardableResult
    public static func streamList<Item: Encodable>(
        key: String, trailing: () -> [(key: String, value: any Encodable)] = { [] }, write: (String) -> Void,
        _ produce: ((Item) throws -> Void) throws -> Void
    ) throws -> Int {
        precondition(key < CodingKeys.schemaVersion.rawValue, "the list's key must come before schema_version")
        func checked() -> [(key: String, value: any Encodable)] {
            let trailing = trailing()
            let trailingKeys = trailing.map(\.key)
            precondition(trailingKeys.isEmpty || (trailingKeys == trailingKeys.sorted() && key < trailingKeys[0] && "error" < trailingKeys[0]
                             && trailingKeys[trailingKeys.count - 1] < CodingKeys.schemaVersion.rawValue),
                         "the trailing keys must sort after the list's key and error, and before schema_version")
            return trailing
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var items = 0
        do {
            // `write` is called only from within `produce`'s run (withoutActuallyEscaping says
            // so to the exclusivity checker).
            try withoutActuallyEscaping(write) { write in
                try produce { item in
                    // Each item's own document moved in two levels, after the list's opening
                    // or the comma that ends the item before.
                    let opening = items == 0 ? "{\n  \(literal(key)) : [\n    " : ",\n    "
                    write(opening + indented(try encoder.encode(item), by: "    "))
                    items += 1
                }
            }
        } catch {
            guard items > 0 else { throw error }
            let failure = (error as? GalleyError) ?? GalleyError("the listing stopped: \(error)")
            let body = (try? encoder.encode(ErrorDocument(failure).error)) ?? Data("{}".utf8)
            write("\n  ],\n  \"error\" : \(indented(body, by: "  "))" + members(checked(), encoder) + end)
            throw ListEndedByError(error: failure)
        }
        if items == 0 {
            write(encode(EmptyList(key: key, trailing: checked())))
        } else {
            write("\n  ]" + members(checked(), encoder) + end)
        }
        return items
    }

    /// A member of a document written by `streamObject`: a value encoded whole, or a list
    /// whose items are encoded one at a time.
    public enum Member {
        case value(String, any Encodable)
        case list(String, [any Encodable])

        public var key: String {
            switch self {
            case .value(let key, _), .list(let key, _): key
            }
        }
    }

    /// The document `encode` makes of an object with these members (given in key order,
    /// without `schema_version`), written through `write` member by member, and each list
    /// item by item: the same bytes, without the encoder holding the whole document at once.
    public static func streamObject(_ members: [Member], write: @escaping (String) -> Void) {
        let writer = ObjectWriter(write: write)
        for member in members {
            switch member {
            case .value(let key, let value): writer.value(key, value)
            case .list(let key, let items):
                writer.beginList(key)
                for item in items { writer.item(item) }
                writer.endList()
            }
        }
        writer.finish()
    }

    /// Writes the document `encode` makes of an object, one member at a time in key order
    /// (`schema_version` is put in its place), a list one item at a time: the same bytes, in
    /// the memory of one member or item (an article's `newer` and `older` list every other
    /// article of a 30,000-article issue: 12.6 MB of JSON, 87 MB of memory to encode whole).
    public final class ObjectWriter {
        private let write: (String) -> Void
        private let encoder = JSONEncoder()
        private var lastKey: String?
        private var versionWritten = false
        /// Items of the list being written, nil outside a list.
        private var listItems: Int?

        public init(write: @escaping (String) -> Void) {
            self.write = write
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        }

        private func encoded(_ value: any Encodable) -> Data {
            // As `members`: Galley's own output types always encode.
            (try? encoder.encode(AnyValue(value))) ?? Data("null".utf8)
        }

        private func key(_ key: String) {
            precondition(listItems == nil, "a member inside a list")
            precondition(lastKey.map { $0 < key } ?? true, "members in key order: \(key) after \(lastKey ?? "")")
            if !versionWritten && key > CodingKeys.schemaVersion.rawValue {
                versionWritten = true
                self.key(CodingKeys.schemaVersion.rawValue)
                write(indented(encoded(schemaVersion), by: "  "))
            }
            write((lastKey == nil ? "{\n  " : ",\n  ") + literal(key) + " : ")
            lastKey = key
        }

        public func value(_ key: String, _ value: any Encodable) {
            self.key(key)
            write(indented(encoded(value), by: "  "))
        }

        public func beginList(_ key: String) {
            self.key(key)
            listItems = 0
        }

        public func item(_ value: any Encodable) {
            guard let count = listItems else { preconditionFailure("an item outside a list") }
            write((count == 0 ? "[\n    " : ",\n    ") + indented(encoded(value), by: "    "))
            listItems = count + 1
        }

        public func endList() {
            guard let count = listItems else { preconditionFailure("no list to end") }
            listItems = nil
            write(count == 0 ? indented(encoded([Int]()), by: "  ") : "\n  ]")
        }

        /// Ends the list being written (if any) and puts `error` after it, as `streamList` does
        /// for a listing the store stopped: the document says it is cut short. Members may follow.
        public func interrupt(_ error: GalleyError) {
            if listItems != nil { endList() }
            let body = (try? encoder.encode(ErrorDocument(error).error)) ?? Data("{}".utf8)
            write(",\n  \"error\" : " + indented(body, by: "  "))
        }

        /// Ends the document (after `schema_version`, if no member came after it).
        public func finish() {
            if listItems != nil { endList() }
            if !versionWritten {
                versionWritten = true
                key(CodingKeys.schemaVersion.rawValue)
                write(indented(encoded(schemaVersion), by: "  "))
            }
            write("\n}\n")
        }
    }

    /// What closes every document: its `schema_version`.
    private static let end = ",\n  \"\(CodingKeys.schemaVersion.rawValue)\" : \(schemaVersion)\n}\n"

    /// `streamList`'s trailing members, each after a comma, as `encode` writes an object's
    /// members. Galley's own output types always encode (as `encode` assumes); should one
    /// fail, its member is null rather than a document cut short.
    private static func members(_ trailing: [(key: String, value: any Encodable)], _ encoder: JSONEncoder) -> String {
        trailing.map { member in
            let value = (try? encoder.encode(AnyValue(member.value))) ?? Data("null".utf8)
            return ",\n  \(literal(member.key)) : " + indented(value, by: "  ")
        }.joined()
    }

    /// A pretty-printed JSON text with every line after its first moved in by `indent`: a
    /// pretty-printed text's only line breaks are its own (a string's are escaped), and an
    /// empty line (inside an empty object or array) stays empty, as `encode` leaves it.
    private static func indented(_ text: Data, by indent: String) -> String {
        let indent = Array(indent.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count + text.count / 8)
        var lineStart = false
        text.withUnsafeBytes { text in
            for byte in text {
                if lineStart && byte != UInt8(ascii: "\n") { bytes += indent }
                bytes.append(byte)
                lineStart = byte == UInt8(ascii: "\n")
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `streamList`'s list was ended by `error` after its first item; the document written
    /// carries the error.
    public struct ListEndedByError: Error {
        public let error: GalleyError
        package init(error: GalleyError) { self.error = error }
    }

    private enum CodingKeys: String, CodingKey { case schemaVersion = "schema_version" }

    /// `{"<key>": [], <trailing>...}`.
    private struct EmptyList: Encodable {
        let key: String
        let trailing: [(key: String, value: any Encodable)]
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode([Int](), forKey: AnyKey(stringValue: key))
            for member in trailing { try container.encode(AnyValue(member.value), forKey: AnyKey(stringValue: member.key)) }
        }
    }

    /// Any encodable value, for the encoder's generic calls.
    private struct AnyValue: Encodable {
        let value: any Encodable
        init(_ value: any Encodable) { self.value = value }
        func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// `text` as a JSON string literal.
    private static func literal(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return (try? encoder.encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }

    /// `value` as one line of JSON (no `schema_version`): for event streams and logs.
    public static func compact<Value: Encodable>(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    private struct Versioned<Wrapped: Encodable>: Encodable {
        var body: Wrapped

        func encode(to encoder: any Encoder) throws {
            try body.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(JSONDocument.schemaVersion, forKey: .schemaVersion)
        }
    }
}

/// `{"error": {"id", "message", "path", "hint"}}`, and the findings when the error is that
/// the input has problems: what `--json` prints when a command could not do its work.
public struct ErrorDocument: Encodable, Sendable {
    public struct Body: Encodable, Sendable {
        public var id: ErrorID
        public var message: String
        @JSONNullable public var path: String?
        @JSONNullable public var hint: String?
    }

    public var error: Body
    /// The findings behind an `input.problems` error.
    public var diagnostics: [Diagnostic]?

    public init(_ error: GalleyError) {
        self.error = Body(id: error.id, message: error.message, path: error.path, hint: error.hint)
    }

    public init(problems diagnostics: [Diagnostic], message: String, hint: String? = nil) {
        error = Body(id: .problems, message: message, path: nil, hint: hint)
        self.diagnostics = diagnostics
    }
}

/// An error inside another document (a failed import, a sync event) is the same object as
/// `{"error": ...}`'s.
extension GalleyError: Encodable {
    public func encode(to encoder: any Encoder) throws {
        try ErrorDocument(self).error.encode(to: encoder)
    }
}

/// An optional value that Galley's JSON writes as `null` when it is absent, where Foundation's
/// synthesized encoding would leave the key out (docs/json.md: every key of a record is always
/// present). Mark a record's optional properties with it instead of writing `encode(to:)` by
/// hand; decoding takes a missing key or `null` as absent.
@propertyWrapper
public struct JSONNullable<Value> {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }
}

extension JSONNullable: Sendable where Value: Sendable {}
extension JSONNullable: Equatable where Value: Equatable {}
extension JSONNullable: Hashable where Value: Hashable {}

extension JSONNullable: Encodable where Value: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension JSONNullable: Decodable where Value: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }
}

extension KeyedDecodingContainer {
    /// A missing key decodes as absent, as it would for a plain optional.
    public func decode<Value: Decodable>(_ type: JSONNullable<Value>.Type, forKey key: Key) throws -> JSONNullable<Value> {
        try decodeIfPresent(type, forKey: key) ?? JSONNullable(wrappedValue: nil)
    }
}
