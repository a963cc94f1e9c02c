import Foundation
import GalleyCore

/// Reads a latest.json file holding one article at a time: the file feeder every reader uses,
/// and the importer's two passes (the issue's own fields, then each article), so that its memory
/// does not grow with an issue.
package enum ManifestStream {
    /// A parser over a latest.json file, read 256 KiB at a time; close the handle when done.
    /// The one file feeder for every reader of latest.json (validate, render, import).
    package static func parser(_ url: URL) throws -> (LocatedJSON.Parser, FileHandle) {
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw GalleyError("cannot read latest.json", path: url.path, hint: "Check the file's permissions.")
        }
        let parser = LocatedJSON.Parser { () -> [UInt8]? in
            let data = try handle.read(upToCount: 256 * 1024) ?? Data()
            return data.isEmpty ? nil : [UInt8](data)
        }
        return (parser, handle)
    }

    /// Walks the top-level object: `member` for every member but `articles`, `article` for each
    /// element of `articles` as it is parsed.
    private static func walk(
        _ url: URL, display: String, member: (LocatedJSON.Member) throws -> Void, article: (LocatedJSON) throws -> Void
    ) throws {
        var (parser, handle) = try parser(url)
        defer { try? handle.close() }
        do {
            try parser.walkObject(streaming: "articles", member: { if $0.key != "articles" { try member($0) } }, element: article)
        } catch let error as LocatedJSON.ParseError {
            throw GalleyError("latest.json does not parse (line \(error.line), column \(error.column)): \(error.message)",
                              path: display, hint: "Run `galley validate` on it.")
        }
    }

    package static func issue(_ url: URL, display: String) throws -> IssueRecord {
        var members: [LocatedJSON.Member] = []
        try walk(url, display: display, member: { members.append($0) }, article: { _ in })
        return ManifestRecords.issue(LocatedJSON(value: .object(members), line: 1, column: 1))
    }

    package static func articles(_ url: URL, display: String, issueGlobalID: String, _ body: (ArticleRecord) throws -> Void) throws {
        try walk(url, display: display, member: { _ in }, article: { node in
            if let record = ManifestRecords.article(node, issueGlobalID: issueGlobalID) { try body(record) }
        })
    }
}
