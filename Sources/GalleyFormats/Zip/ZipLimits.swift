import GalleyCore
/// Limits a zip must stay under to be read at all: declared sizes, ratios and counts.
public struct ContainerLimits: Sendable {
    /// Entries a zip may list (Dumpling's reader holds 65,535).
    public var maxEntries = 65_535
    /// The sum of the entries' declared uncompressed sizes.
    public var maxTotalBytes: UInt64 = 4 * 1024 * 1024 * 1024
    /// Compression ratio above which an entry (of at least `ratioFloor` bytes) is refused.
    public var maxRatio: UInt64 = 100
    public var ratioFloor: UInt64 = 1024 * 1024
    /// A name's length in bytes.
    public var maxNameBytes = 1024
    /// Name components of an entry: the issue folder, two levels of subfolders, the file.
    public var maxDepth = 4

    public init() {}
}

/// What a pack produced.
/// The largest zip a reader without Zip64 (Dumpling's minizip 1.01h) can open.
public struct ZipLimits: Sendable {
    public var maxEntries: Int
    public var maxBytes: Int64

    public init(maxEntries: Int, maxBytes: Int64) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }

    public static let classic = ZipLimits(maxEntries: 65_535, maxBytes: 0xFFFF_FFFF)
}
