import GalleyCore

/// What a lookup by id answers when it finds nothing, or more than one: the same words from
/// every backend (`store` is the store as messages name it).
package enum StoreLookup {
    package static func noIssue(_ id: String, store: String) -> GalleyError {
        GalleyError("no issue `\(id)` in the store", id: .notFound, path: store, hint: "`galley issues` lists them.", missing: .issue(id))
    }

    package static func noFile(_ name: String, issue: String, store: String) -> GalleyError {
        GalleyError("no file `\(name)` in issue `\(issue)`", id: .notFound, path: store,
                    hint: "`galley assets --issue \(issue)` lists its files.", missing: .file(issue: issue, name: name))
    }

    /// The one row among `rows` (the articles whose global id is `id`): article ids are scoped
    /// per issue, so several issues may hold one, and then the caller must name the issue.
    package static func oneArticle(_ rows: [Int64], _ id: String, store: String) throws -> Int64 {
        guard let first = rows.first else {
            throw GalleyError("no article `\(id)` in the store", id: .notFound, path: store, hint: "`galley articles` lists them.", missing: .article(id))
        }
        guard rows.count == 1 else {
            throw GalleyError("\(rows.count) issues have an article `\(id)`", id: .notFound, path: store,
                              hint: "Name the issue with --issue (ids are scoped per issue).", missing: .articleInSeveralIssues(id))
        }
        return first
    }
}
