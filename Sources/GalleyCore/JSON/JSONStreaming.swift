import Foundation

extension JSONDocument {
    /// Writes the bytes `encode` makes of `body` through `write`, in pieces of about 64 KB:
    /// each array item by item, and each object that holds an array member by member; every
    /// other value is encoded whole. So a document takes the memory of its largest such value
    /// instead of the whole encoding (Foundation's encoder builds every value of the document
    /// before writing the first byte: `render --json` of a 30,000-article source with 60,000
    /// warnings peaked at 198 MB against 119 MB without --json). A value whose encoding this
    /// cannot follow (nested containers made by hand) is encoded whole, as `encode` would.
    public static func write<Body: Encodable>(_ body: Body, to write: (String) -> Void) {
        withoutActuallyEscaping(write) { write in
            let streamer = Streamer(write: write)
            streamer.value(Versioned(body: body), indent: "", depth: 0)
            streamer.emit("\n")
            streamer.flush()
        }
    }

    /// Writes values as Foundation's pretty printer does (`"key" : value`, two spaces a level,
    /// sorted keys, `[` and `{` of an empty container on lines of their own).
    private final class Streamer {
        private let write: (String) -> Void
        private let encoder = JSONEncoder()
        private var buffer = ""
        /// Deeper than this, a value is encoded whole (and Foundation's own limit applies).
        private static let maxDepth = 64

        init(write: @escaping (String) -> Void) {
            self.write = write
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        }

        func emit(_ text: String) {
            buffer += text
            if buffer.utf8.count >= 1 << 16 { flush() }
        }

        func flush() {
            guard !buffer.isEmpty else { return }
            write(buffer)
            buffer = ""
        }

        /// `value` at `indent` (its first line follows what is written already).
        func value(_ value: any Encodable, indent: String, depth: Int) {
            let shape = Shape.of(value)
            guard depth < Self.maxDepth else { return whole(value, indent: indent) }
            switch shape {
            case .object(let members) where streams(members, depth: depth):
                object(members, indent: indent, depth: depth)
            case .array(let count) where count > 0:
                // Only an Array's items are read again one by one (a Set's order, or a
                // dictionary encoded as a list of keys and values, is left to the encoder).
                guard let items = value as? any EncodableItems else { return whole(value, indent: indent) }
                array(items.encodableItems, indent: indent, depth: depth)
            case .wrapped(let inner):
                self.value(inner, indent: indent, depth: depth + 1)
            default:
                whole(value, indent: indent)
            }
        }

        /// Whether an object is written member by member: when one of its members is an array
        /// (with items) or an object that is.
        private func streams(_ members: [(key: String, value: Member)], depth: Int) -> Bool {
            guard depth < Self.maxDepth else { return false }
            return members.contains { member in
                guard case .value(let value) = member.value else { return false }
                return holdsItems(value, depth: depth + 1)
            }
        }

        private func holdsItems(_ value: any Encodable, depth: Int) -> Bool {
            guard depth < Self.maxDepth else { return false }
            switch Shape.of(value) {
            case .array(let count): return count > 0
            case .object(let members): return streams(members, depth: depth)
            case .wrapped(let inner): return holdsItems(inner, depth: depth + 1)
            case .leaf, .null: return false
            }
        }

        private func object(_ members: [(key: String, value: Member)], indent: String, depth: Int) {
            // Sorted as `.sortedKeys` sorts (byte order); a key encoded twice keeps its last value.
            var last: [String: Int] = [:]
            for (index, member) in members.enumerated() { last[member.key] = index }
            let sorted = last.sorted { $0.key < $1.key }
            guard !sorted.isEmpty else { return emit("{\n\n\(indent)}") }
            let inner = indent + "  "
            emit("{\n")
            for (position, entry) in sorted.enumerated() {
                emit((position == 0 ? "" : ",\n") + inner + JSONDocument.literal(entry.key) + " : ")
                switch members[entry.value].value {
                case .null: emit("null")
                case .value(let value): self.value(value, indent: inner, depth: depth + 1)
                }
            }
            emit("\n\(indent)}")
        }

        private func array(_ items: AnySequence<any Encodable>, indent: String, depth: Int) {
            let inner = indent + "  "
            emit("[\n")
            var first = true
            for item in items {
                emit((first ? "" : ",\n") + inner)
                value(item, indent: inner, depth: depth + 1)
                first = false
            }
            emit("\n\(indent)]")
        }

        private func whole(_ value: any Encodable, indent: String) {
            // Galley's own output types always encode; should a value fail, it is null rather
            // than a document cut short.
            let data = (try? encoder.encode(AnyEncodable(value))) ?? Data("null".utf8)
            emit(JSONDocument.indented(data, by: indent))
        }
    }

    /// An array's items, each as an encodable value when it is reached (not all at once).
    fileprivate protocol EncodableItems {
        var encodableItems: AnySequence<any Encodable> { get }
    }

    /// A member's value as `encode(to:)` handed it over.
    fileprivate enum Member {
        case null
        case value(any Encodable)
    }

    /// What a value's `encode(to:)` makes, one level deep, found without encoding anything.
    fileprivate enum Shape {
        case object([(key: String, value: Member)])
        /// An array of `count` items (which are read again from the value, one at a time).
        case array(Int)
        /// A single value that is another encodable value (a property wrapper's).
        case wrapped(any Encodable)
        case leaf
        case null

        static func of(_ value: any Encodable) -> Shape {
            let probe = Probe()
            do { try value.encode(to: probe) } catch { return .leaf }
            if probe.unsupported { return .leaf }
            switch probe.kind {
            case .keyed: return .object(probe.members)
            case .unkeyed: return .array(probe.count)
            case .single:
                switch probe.single {
                case .value(let inner)?: return .wrapped(inner)
                case .null?: return .null
                case nil: return .leaf
                }
            case .primitive, .none: return .leaf
            }
        }
    }

    /// An encoder that records the containers a value asks for and what it puts in them.
    private final class Probe: Encoder {
        enum Kind { case keyed, unkeyed, single, primitive }
        var kind: Kind?
        var members: [(key: String, value: Member)] = []
        var count = 0
        var single: Member?
        /// The value used what this probe does not follow: nested containers, a second kind.
        var unsupported = false
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] = [:]

        func claim(_ wanted: Kind) {
            if kind == nil { kind = wanted } else if kind != wanted { unsupported = true }
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            claim(.keyed)
            return KeyedEncodingContainer(KeyedProbe<Key>(probe: self))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            claim(.unkeyed)
            return UnkeyedProbe(probe: self)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            claim(.single)
            return SingleProbe(probe: self)
        }
    }

    private struct KeyedProbe<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let probe: Probe
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { probe.members.append((key.stringValue, .null)) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: String, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: Double, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: Float, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: Int, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { probe.members.append((key.stringValue, .value(value))) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey> {
            probe.unsupported = true
            return KeyedEncodingContainer(KeyedProbe<NestedKey>(probe: Probe()))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            probe.unsupported = true
            return UnkeyedProbe(probe: Probe())
        }

        mutating func superEncoder() -> any Encoder {
            probe.unsupported = true
            return Probe()
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            probe.unsupported = true
            return Probe()
        }
    }

    /// Counts the items; they are read again from the value itself, one at a time.
    private struct UnkeyedProbe: UnkeyedEncodingContainer {
        let probe: Probe
        var codingPath: [any CodingKey] { [] }
        var count: Int { probe.count }

        mutating func encodeNil() throws { probe.count += 1 }
        mutating func encode<T: Encodable>(_ value: T) throws { probe.count += 1 }
        mutating func encode(_ value: Bool) throws { probe.count += 1 }
        mutating func encode(_ value: String) throws { probe.count += 1 }
        mutating func encode(_ value: Double) throws { probe.count += 1 }
        mutating func encode(_ value: Float) throws { probe.count += 1 }
        mutating func encode(_ value: Int) throws { probe.count += 1 }
        mutating func encode(_ value: Int8) throws { probe.count += 1 }
        mutating func encode(_ value: Int16) throws { probe.count += 1 }
        mutating func encode(_ value: Int32) throws { probe.count += 1 }
        mutating func encode(_ value: Int64) throws { probe.count += 1 }
        mutating func encode(_ value: UInt) throws { probe.count += 1 }
        mutating func encode(_ value: UInt8) throws { probe.count += 1 }
        mutating func encode(_ value: UInt16) throws { probe.count += 1 }
        mutating func encode(_ value: UInt32) throws { probe.count += 1 }
        mutating func encode(_ value: UInt64) throws { probe.count += 1 }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            probe.unsupported = true
            return KeyedEncodingContainer(KeyedProbe<NestedKey>(probe: Probe()))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            probe.unsupported = true
            return UnkeyedProbe(probe: Probe())
        }

        mutating func superEncoder() -> any Encoder {
            probe.unsupported = true
            return Probe()
        }
    }

    /// A single value: a primitive is a leaf; any other value is looked into in its turn.
    private struct SingleProbe: SingleValueEncodingContainer {
        let probe: Probe
        var codingPath: [any CodingKey] { [] }

        private func primitive() { probe.kind = .primitive }
        mutating func encodeNil() throws { probe.single = .null }
        mutating func encode<T: Encodable>(_ value: T) throws { probe.single = .value(value) }
        mutating func encode(_ value: Bool) throws { primitive() }
        mutating func encode(_ value: String) throws { primitive() }
        mutating func encode(_ value: Double) throws { primitive() }
        mutating func encode(_ value: Float) throws { primitive() }
        mutating func encode(_ value: Int) throws { primitive() }
        mutating func encode(_ value: Int8) throws { primitive() }
        mutating func encode(_ value: Int16) throws { primitive() }
        mutating func encode(_ value: Int32) throws { primitive() }
        mutating func encode(_ value: Int64) throws { primitive() }
        mutating func encode(_ value: UInt) throws { primitive() }
        mutating func encode(_ value: UInt8) throws { primitive() }
        mutating func encode(_ value: UInt16) throws { primitive() }
        mutating func encode(_ value: UInt32) throws { primitive() }
        mutating func encode(_ value: UInt64) throws { primitive() }
    }
}

extension Array: JSONDocument.EncodableItems where Element: Encodable {
    fileprivate var encodableItems: AnySequence<any Encodable> { AnySequence(lazy.map { $0 as any Encodable }) }
}
