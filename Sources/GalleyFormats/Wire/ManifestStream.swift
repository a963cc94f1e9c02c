import Foundation
import GalleyCore

/// The one reader of latest.json, for validate, render and import: it streams the top-level
/// object from a file, a zip entry or a text, keeps the issue's own members, and hands over each
/// element of `articles` as soon as it is parsed, so that memory is that of one article whatever
/// the issue's size. What goes wrong is a `Failure` with its line and column.
package struct ManifestStream {
    /// Why latest.json could not be read to its end.
    package enum Failure: Error {
        /// The bytes are not JSON (or not the JSON that ends there).
        case syntax(LocatedJSON.ParseError)
        /// The bytes could not be read (a damaged zip entry, an I/O error).
        case source(String)
        /// The file starts with a UTF-8 byte-order mark, which Dumpling's parser refuses.
        case byteOrderMark
        /// The top level is a value of another type (parsed whole: it is small or invalid).
        case notAnObject(LocatedJSON)
    }

    /// The issue object without its articles, as far as the reader got.
    package struct Issue {
        /// The members in file order; `articles` (when it is an array) appears as an empty array
        /// at its place.
        package var members: [LocatedJSON.Member] = []
        /// Where the top-level object starts.
        package var line = 1
        /// Whether `articles` was an array (its elements went to the callback).
        package var articlesStreamed = false
        /// How many articles the callback was given.
        package var articleCount = 0

        package var node: LocatedJSON { LocatedJSON(value: .object(members), line: line, column: 1) }
        /// The model's view of it (empty strings for what is missing).
        package var record: IssueRecord { ManifestRecords.issue(node) }
    }

    private var parser: LocatedJSON.Parser
    private var closing: (() -> Void)?
    /// What the chunk source itself threw, when reading stopped on it (a damaged zip entry).
    package var sourceError: Error? { parser.sourceError }
    /// Keys given twice in one object, anywhere in the document (the first 100), and how many.
    package var duplicateKeys: [(key: String, line: Int, column: Int)] { parser.duplicateKeys }
    package var duplicateKeyCount: Int { parser.duplicateKeyCount }

    /// Reads the chunks `next` returns until it returns nil (a zip entry, a socket).
    package init(chunks next: @escaping () throws -> [UInt8]?) {
        parser = LocatedJSON.Parser(next: next)
    }

    /// Reads a text already in memory.
    package init(text: String) {
        var delivered = false
        self.init(chunks: {
            defer { delivered = true }
            return delivered ? nil : Array(text.utf8)
        })
    }

    /// Reads a file 256 KiB at a time; the file is closed when `read` returns.
    package init(file url: URL) throws {
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw GalleyError("cannot read latest.json", id: .inputUnreadable, path: url.path, hint: "Check the file's permissions.")
        }
        self.init(chunks: {
            let data = try handle.read(upToCount: 256 * 1024) ?? Data()
            return data.isEmpty ? nil : [UInt8](data)
        })
        closing = { try? handle.close() }
    }

    /// Reads the whole document. `article` gets each element of `articles` (its index, the node,
    /// and the issue's members read so far) as it is parsed. Errors the callback throws pass
    /// through. There is no stopping early: the issue's members may follow its articles, and a
    /// file broken further on must be refused rather than half-used.
    package mutating func read(
        article: (Int, LocatedJSON, [LocatedJSON.Member]) throws -> Void = { _, _, _ in }
    ) throws -> Issue {
        defer { closing?(); closing = nil }
        var issue = Issue()
        do {
            parser.skipSpace()
            if parser.peek() == 0xEF { throw Failure.byteOrderMark }
            guard parser.peek() == UInt8(ascii: "{") else {
                let value = try parser.parseValue(depth: 0)
                try parser.expectEnd()
                throw Failure.notAnObject(value)
            }
            issue.line = parser.line
            try parser.walkObject(streaming: "articles", member: { member in
                if member.key == "articles", case .array = member.value.value, !issue.articlesStreamed {
                    issue.articlesStreamed = true
                }
                issue.members.append(member)
            }, element: { node in
                defer { issue.articleCount += 1 }
                try article(issue.articleCount, node, issue.members)
            })
            try parser.expectEnd()
        } catch let error as LocatedJSON.ParseError {
            if let source = parser.sourceError { throw Failure.source("\(source)") }
            throw Failure.syntax(error)
        }
        return issue
    }

    /// The issue's members up to its first article, reading no further (all of them when it has
    /// none): its own fields when they come first, as Galley and Linechef write them. What
    /// comes after the first article is not read, so nothing says the document is whole.
    package mutating func readHead() throws -> Issue {
        struct FirstArticle: Error { let members: [LocatedJSON.Member] }
        do {
            return try read(article: { _, _, members in throw FirstArticle(members: members) })
        } catch let first as FirstArticle {
            var issue = Issue()
            issue.members = first.members
            return issue
        }
    }

    /// A `Failure` as a `GalleyError` for the importer, which only needs to stop (its zip has
    /// passed validate first; render reports a failure as validate does, `Validator.diagnostic`).
    package static func describe(_ failure: Failure, display: String) -> GalleyError {
        let hint = "Run `galley validate` on it."
        switch failure {
        case .syntax(let error):
            return GalleyError("latest.json is not valid JSON (line \(error.line), column \(error.column)): \(error.message)", id: .inputUnreadable,
                               path: display, hint: hint)
        case .source(let message): return GalleyError("latest.json cannot be read: \(message)", id: .inputUnreadable, path: display, hint: hint)
        case .byteOrderMark: return GalleyError("latest.json starts with a byte-order mark", id: .inputUnreadable, path: display, hint: hint)
        case .notAnObject(let value):
            return GalleyError("latest.json is \(value.typeName), not an object", id: .inputUnreadable, path: display, hint: hint)
        }
    }

    // MARK: The importer's two passes

    /// The issue's own fields from a latest.json file (articles are parsed and dropped).
    package static func issue(_ url: URL, display: String) throws -> IssueRecord {
        var reader = try ManifestStream(file: url)
        do { return try reader.read().record } catch let failure as Failure { throw describe(failure, display: display) }
    }

    /// Each article of a latest.json file, as the model sees it.
    package static func articles(_ url: URL, display: String, issueGlobalID: String, _ body: (ArticleRecord) throws -> Void) throws {
        var reader = try ManifestStream(file: url)
        do {
            _ = try reader.read { _, node, _ in
                if let record = ManifestRecords.article(node, issueGlobalID: issueGlobalID) { try body(record) }
            }
        } catch let failure as Failure { throw describe(failure, display: display) }
    }
}
