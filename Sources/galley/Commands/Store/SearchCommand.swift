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
            and with or without accents. Results are ranked by BM25: a match in the title weighs \
            most, then the dek and keywords, then the body; each comes with a snippet of its body.

            When more than \(SearchOptions.defaultRankLimit) articles match, the \(SearchOptions.defaultRankLimit) \
            most recently imported of them are ranked, which keeps broad searches fast, and a note \
            on standard error says so. --rank-all ranks every match.

            With --json: {"query", "results": [...], "ranked_only_most_recent"} \
            (docs/json/search.schema.json).
            """)

    @Argument(help: "Words to find (all of them, as word prefixes).")
    var text: String
    @Option(help: "Only this issue.")
    var issue: String?
    @Option(help: "At most this many results, best first.")
    var limit = 20
    @Flag(help: "Rank every match, however many (slower when thousands of articles match).")
    var rankAll = false
    @OptionGroup var store: StoreOptions
    @OptionGroup var output: OutputOptions

    struct Document: Encodable {
        var query: String
        var results: [StoredArticle]
        /// Set when only the most recently imported this many matches were ranked.
        var rankedOnlyMostRecent: Int?

        private enum CodingKeys: String, CodingKey {
            case query, results
            case rankedOnlyMostRecent = "ranked_only_most_recent"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(query, forKey: .query)
            try container.encode(results, forKey: .results)
            try container.encode(rankedOnlyMostRecent, forKey: .rankedOnlyMostRecent)
        }
    }

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1.") }
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
                return console.emit(Document(query: text, results: results.articles, rankedOnlyMostRecent: results.rankedOnlyMostRecent))
            }
            if results.articles.isEmpty {
                console.note("no article matches every word of “\(text)”\(issue.map { " in \($0)" } ?? "")")
            }
            for article in results.articles {
                console.data("\(article.globalID)  \(article.title)\n    \(article.snippet ?? "")\n")
            }
        }
    }
}
