import Foundation

/// The shapes of `galley serve`'s JSON, as the Grails seed versions them: version 1 lists
/// articles with their bodies, version 2 lists them without (and `/articles/{id}` gives one
/// body). Chosen by a `/v1` or `/v2` path prefix, else by the `Accept-Version` header, else
/// the current version.
public enum APIVersion: String, Sendable, CaseIterable {
    case v1 = "1.0"
    case v2 = "2.0"

    public static let current = APIVersion.v2

    /// Version 1 is retired: its answers carry `Deprecation` (RFC 9745) and `Sunset` (RFC 8594).
    public var isRetired: Bool { self == .v1 }
    /// 2026-07-01T00:00:00Z, as an RFC 9745 structured date.
    static let deprecation = "@1782864000"
    /// Not earlier than the deprecation (RFC 9745 §3).
    static let sunset = "Thu, 01 Jul 2027 00:00:00 GMT"

    /// Whether article lists carry bodies.
    public var listsBodies: Bool { self == .v1 }

    /// The path prefix (`v1`).
    public var prefix: String {
        switch self {
        case .v1: "v1"
        case .v2: "v2"
        }
    }

    /// `Accept-Version` as clients write it: `2.0`, `2`, `2.x`, `v2`; `nil` when no version
    /// has that major number.
    public init?(header: String) {
        var text = header.trimmingCharacters(in: .whitespaces).lowercased()
        if text.hasPrefix("v") { text.removeFirst() }
        let major = text.split(separator: ".", maxSplits: 1).first.map(String.init) ?? text
        guard let version = Self.allCases.first(where: { $0.rawValue.hasPrefix(major + ".") }) else { return nil }
        let minor = text.dropFirst(major.count)
        guard minor.isEmpty || minor == ".0" || minor == ".x" || minor == ".*" else { return nil }
        self = version
    }
}
