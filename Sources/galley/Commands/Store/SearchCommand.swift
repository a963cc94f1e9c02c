import ArgumentParser
import Foundation
import GalleyCore
import GalleyKit
import GalleyStore

struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search", abstract: "Full-text search over titles, deks, keywords and bodies, best first.",
        discussion: """
            Every word must match, as the start of a word ("harb" finds "harbour"), in any case \
            and with or without accents ("cafe" finds "café"); an apostrophe belongs to its word \
            ("Queequeg's" finds only that word, "Queequeg" finds both). Words in double quotes \
            must appear together, in that order: galley search '"call me ishmael"'. Results are ranked by BM25: a match in the title weighs \
            most, then the dek and keywords, then the body; each comes with a snippet of its body. \
            Text that starts with a dash would be read as an option: put it last, after `--` \
            (galley search --limit 5 -- -40).

            When more than \(SearchOptions.defaultRankLimit) articles match, the \(SearchOptions.defaultRankLimit) \
            most recently imported of them are ranked, which keeps broad searches fast, and a note \
            on standard error says so. --rank-all ranks every match.

            With --json: {"query", "items": [...], "ranked_only_most_recent"}, as serve's \
            /search answers (docs/json/search.schema.json); each item has a one-line snippet and highlights: \
            {"field": "title" or "snippet", "start", "length"}, counted in Unicode scalars.
            """)

    @Argument(help: "Words to find (all of them, as word prefixes).")
    var text: String
    @Option(help: "Only this issue.", completion: .custom(StoreCompletion.issueIDs))
    var issue: String?
    @Option(help: "At most this many results, best first.")
    var limit = 20
    @Flag(help: "Rank every match, however many (slower when thousands of articles match).")
    var rankAll = false
    @OptionGroup var store: StoreOptions
    @OptionGroup var output: OutputOptions

    struct Document: Encodable {
        var query: String
        /// `items`, as every list serve answers (`/search` gives the same document).
        var items: [StoredArticle]
        /// Set when only the most recently imported this many matches were ranked.
        @JSONNullable var rankedOnlyMostRecent: Int?

        private enum CodingKeys: String, CodingKey {
            case query, items
            case rankedOnlyMostRecent = "ranked_only_most_recent"
        }
    }

    /// `text` with each highlighted range (offsets in Unicode scalars) between `open` and `close`.
    static func mark(_ text: String, _ highlights: [SearchHighlight], _ open: String, _ close: String) -> String {
        guard !highlights.isEmpty else { return text }
        let starts = Dictionary(highlights.map { ($0.start, $0.length) }, uniquingKeysWith: max)
        var out = ""
        var closeAt: Int?
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            if offset == closeAt { out += close; closeAt = nil }
            if closeAt == nil, let length = starts[offset] { out += open; closeAt = offset + length }
            out.unicodeScalars.append(scalar)
        }
        if closeAt != nil { out += close }
        return out
    }

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let console = output.console
        try console.run {
            var options = SearchOptions(issue: issue, limit: limit)
            if rankAll { options.rankLimit = nil }
            let opened = try store.open()
            let results = try console.timed("search") { try opened.search(text, options: options) }
            if let ranked = results.rankedOnlyMostRecent {
                console.note(
                    "note: more than \(ranked) articles match; the \(ranked) most recently imported were ranked "
                    + "(--rank-all ranks every match; more words or --issue narrow the search)")
            }
            if output.json {
                return console.emit(Document(query: text, items: results.articles, rankedOnlyMostRecent: results.rankedOnlyMostRecent))
            }
            if results.articles.isEmpty {
                console.note("no article matches every word of “\(text)”\(issue.map { " in \($0)" } ?? "")")
            }
            // Matched words bold on a colour terminal, in [brackets] elsewhere.
            let (open, close) = console.out.useColor ? ("\u{1B}[1m", "\u{1B}[0m") : ("[", "]")
            for article in results.articles {
                let highlights = article.highlights ?? []
                let title = Self.mark(article.title, highlights.filter { $0.field == .title }, open, close)
                let snippet = Self.mark(article.snippet ?? "", highlights.filter { $0.field == .snippet }, open, close)
                console.data("\(article.globalID)  \(title)\n    \(snippet)\n")
            }
        }
    }
}
