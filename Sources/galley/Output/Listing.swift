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
        var pending = ""
        var listed = 0
        func write(_ text: String) {
            pending += text
            if pending.utf8.count >= 65_536 { flush() }
        }
        func flush() {
            if !pending.isEmpty { data(pending) }
            pending = ""
        }
        defer { flush() }
        guard json else {
            try produce { item in
                write(line(item))
                listed += 1
            }
            return listed
        }
        do {
            listed = try JSONDocument.streamList(key: key, trailing: trailing, write: write, produce)
        } catch let ended as JSONDocument.ListEndedByError {
            // The document on standard output carries the error already.
            flush()
            err.report(ended.error)
            throw Status.couldNotRun
        }
        return listed
    }

    /// A JSON document written in pieces as `document` makes it (`IssueStore.writeArticleDocument`),
    /// to standard output in pieces of about 64 KiB. Should the store fail once the document
    /// has begun, the document carries the error and the command exits 2, as a listing's.
    func streamDocument(_ document: (@escaping (String) -> Void) throws -> Void) throws {
        final class Pending {
            var text = ""
        }
        let pending = Pending()
        let flush = {
            if !pending.text.isEmpty { self.data(pending.text) }
            pending.text = ""
        }
        defer { flush() }
        do {
            try document { text in
                pending.text += text
                if pending.text.utf8.count >= 65_536 { flush() }
            }
        } catch let ended as JSONDocument.ListEndedByError {
            flush()
            err.report(ended.error)
            throw Status.couldNotRun
        }
    }
}
