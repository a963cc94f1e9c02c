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
        var items = 0
        // `write` is called only from within this call (withoutActuallyEscaping says so to the
        // exclusivity checker); the writer puts every piece as `encode` would.
        try withoutActuallyEscaping(write) { write in
            let writer = ObjectWriter(write: write)
            func end() {
                for member in checked() { writer.value(member.key, member.value) }
                writer.finish()
            }
            writer.beginList(key)  // written with the first item (or the end): nothing before
            do {
                try produce { item in
                    try writer.item(item)
                    items += 1
                }
            } catch {
                guard items > 0 else { throw error }
                let failure = (error as? GalleyError) ?? GalleyError("the listing stopped: \(error)")
                writer.interrupt(failure)
                end()
                throw ListEndedByError(error: failure)
            }
            writer.endList()
            end()
        }
        return items
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
        /// The list's opening, written with its first item or its end.
        private var pendingOpening = ""

        public init(write: @escaping (String) -> Void) {
            self.write = write
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        }

        private func encoded(_ value: any Encodable) -> Data {
            // Galley's own output types always encode; should a member fail, it is null rather
            // than a document cut short.
            (try? encoder.encode(AnyEncodable(value))) ?? Data("null".utf8)
        }

        /// What opens the member `key` (its comma, its name), after `schema_version`'s member
        /// when `key` is the first to sort after it: written with what follows, one piece.
        private func opening(_ key: String) -> String {
            precondition(listItems == nil, "a member inside a list")
            precondition(lastKey.map { $0 < key } ?? true, "members in key order: \(key) after \(lastKey ?? "")")
            var text = ""
            if !versionWritten && key > CodingKeys.schemaVersion.rawValue { text = versionMember() }
            text += (lastKey == nil ? "{\n  " : ",\n  ") + literal(key) + " : "
            lastKey = key
            return text
        }

        private func versionMember() -> String {
            versionWritten = true
            return opening(CodingKeys.schemaVersion.rawValue) + "\(schemaVersion)"
        }

        public func value(_ key: String, _ value: any Encodable) {
            write(opening(key) + indented(encoded(value), by: "  "))
        }

        /// Begins the list `key`; nothing is written until its first item or its end.
        public func beginList(_ key: String) {
            pendingOpening = opening(key)
            listItems = 0
        }

        /// The next item of the list begun; throws what encoding it threw (nothing is written).
        public func item(_ value: any Encodable) throws {
            guard let count = listItems else { preconditionFailure("an item outside a list") }
            let text = indented(try encoder.encode(AnyEncodable(value)), by: "    ")
            write(pendingOpening + (count == 0 ? "[\n    " : ",\n    ") + text)
            pendingOpening = ""
            listItems = count + 1
        }

        public func endList() {
            guard let count = listItems else { preconditionFailure("no list to end") }
            listItems = nil
            write(pendingOpening + (count == 0 ? indented(encoded([Int]()), by: "  ") : "\n  ]"))
            pendingOpening = ""
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
            write((versionWritten ? "" : versionMember()) + "\n}\n")
        }
    }

    /// A pretty-printed JSON text with every line after its first moved in by `indent`: a
    /// pretty-printed text's only line breaks are its own (a string's are escaped), and an
    /// empty line (inside an empty object or array) stays empty, as `encode` leaves it.
    static func indented(_ text: Data, by indent: String) -> String {
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

    /// `text` as a JSON string literal.
    static func literal(_ text: String) -> String {
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

    struct Versioned<Wrapped: Encodable>: Encodable {
        var body: Wrapped

        func encode(to encoder: any Encoder) throws {
            try body.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(JSONDocument.schemaVersion, forKey: .schemaVersion)
        }
    }
}

/// Any encodable value, for an encoder's generic calls (a route's answer, a document's member).
package struct AnyEncodable: Encodable {
    let value: any Encodable
    package init(_ value: any Encodable) { self.value = value }
    package func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
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
