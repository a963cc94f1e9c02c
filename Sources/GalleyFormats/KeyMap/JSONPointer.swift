import GalleyCore

/// RFC 6901 JSON Pointers, the paths of key maps: exact, with no query language to version.
/// Written here because it is a dozen lines over the project's one JSON value type.
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    public let description: String
    let tokens: [String]

    /// `""` is the whole document; otherwise `/a/0/b`, with `~1` for `/` and `~0` for `~`.
    public init?(_ text: String) {
        guard text.isEmpty || text.hasPrefix("/") else { return nil }
        description = text
        tokens = text.isEmpty ? [] : text.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
    }

    /// The value at this pointer in `value`, or nil when a step is missing.
    public func resolve(in value: JSONValue) -> JSONValue? {
        var current = value
        for token in tokens {
            switch current {
            case .object:
                guard let next = current[token] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(token), token == String(index), items.indices.contains(index) else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }
}
