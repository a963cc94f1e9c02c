import Foundation

/// The repository's test files, found from this file's place, for every test target.
public enum TestFiles {
    /// `Tests/Fixtures`.
    public static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures")
    /// `Examples/winter-2026`, the bundled example issue.
    public static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Examples/winter-2026")
}
