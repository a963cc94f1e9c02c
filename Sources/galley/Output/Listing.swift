import GalleyCore

extension Console {
    /// A listing printed as the store reads it, never whole in memory: a line per item (`line`),
    /// or with --json the one document `JSONDocument.streamList` writes (the same bytes as the
    /// whole list's). Standard output is written in pieces of about 64 KiB, not a write per line.
    /// Returns how many items were listed. Should the store fail after the first item under
    /// --json, the document carries the error (docs/json.md) and the command exits 2.
    /// `trailing`: the document's other members, once the list has ended (see `streamList`).
    func streamListing<Item: Encodable>(
        key: String, trailing: () -> [(key: String, value: any Encodable)] = { [] }, line: @escaping (Item) -> String,
        _ produce: ((Item) throws -> Void) throws -> Void
    ) throws -> Int {
        let output = PendingOutput(self)
        defer { output.flush() }
        var listed = 0
        guard json else {
            try produce { item in
                output.write(line(item))
                listed += 1
            }
            return listed
        }
        do {
            listed = try JSONDocument.streamList(key: key, trailing: trailing, write: output.write, produce)
        } catch let ended as JSONDocument.ListEndedByError {
            // The document on standard output carries the error already.
            output.flush()
            err.report(ended.error)
            throw Status.couldNotRun
        }
        return listed
    }

    /// A JSON document written in pieces as `document` makes it (`IssueStore.writeArticleDocument`),
    /// to standard output in pieces of about 64 KiB. Should the store fail once the document
    /// has begun, the document carries the error and the command exits 2, as a listing's.
    func streamDocument(_ document: (@escaping (String) -> Void) throws -> Void) throws {
        let output = PendingOutput(self)
        defer { output.flush() }
        do {
            try document(output.write)
        } catch let ended as JSONDocument.ListEndedByError {
            output.flush()
            err.report(ended.error)
            throw Status.couldNotRun
        }
    }
}

/// Standard output gathered into pieces of about 64 KiB: one write per piece, not per line.
private final class PendingOutput {
    private let console: Console
    private var text = ""

    init(_ console: Console) { self.console = console }

    func write(_ piece: String) {
        text += piece
        if text.utf8.count >= 65_536 { flush() }
    }

    func flush() {
        if !text.isEmpty { console.data(text) }
        text = ""
    }
}
