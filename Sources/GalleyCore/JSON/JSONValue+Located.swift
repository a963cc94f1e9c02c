extension JSONValue {
    /// The plain value of a located JSON tree.
    public init(_ located: LocatedJSON) {
        switch located.value {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .number(let n): self = .number(n)
        case .string(let s): self = .string(s)
        case .array(let items): self = .array(items.map(JSONValue.init))
        case .object(let members): self = .object(members.map { ($0.key, JSONValue($0.value)) })
        }
    }

    /// The value a JSON text holds (metadata stored as text, an example's JSON); nil when the
    /// text is not JSON.
    public init?(parsing text: String) {
        guard let value = try? JSONValue.parse(text) else { return nil }
        self = value
    }

    /// The value a JSON text holds; the parser's error, with its line and column, when the
    /// text is not JSON (for a message that says where).
    public static func parse(_ text: String) throws(LocatedJSON.ParseError) -> JSONValue {
        JSONValue(try LocatedJSON.parse(Array(text.utf8)))
    }

    /// Sets (or, with `nil`, removes) a member of an object, keeping the order of the others.
    package func setting(_ key: String, _ newValue: JSONValue?) -> JSONValue {
        guard case .object(var members) = self else { return self }
        if let index = members.firstIndex(where: { $0.0 == key }) {
            if let newValue { members[index].1 = newValue } else { members.remove(at: index) }
        } else if let newValue {
            members.append((key, newValue))
        }
        return .object(members)
    }
}

extension JSONValue {
    package var numberText: String? {
        switch self {
        case .number(let n): n
        case .string(let s): s
        default: nil
        }
    }
}
