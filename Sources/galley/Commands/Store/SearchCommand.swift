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

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1.") }
    }

    func run() throws {
        try reportingErrors {
            var options = SearchOptions(issue: issue, limit: limit)
            if rankAll { options.rankLimit = nil }
            let results = try store.open().search(text, options: options)
            if let ranked = results.rankedOnlyMostRecent {
                Terminal.standardError.write(
                    "note: more than \(ranked) articles match; the \(ranked) most recently imported were ranked "
                    + "(--rank-all ranks every match; more words or --issue narrow the search)\n")
            }
            if store.json { return printJSON(results.articles) }
            if results.articles.isEmpty {
                Terminal.standardError.write("no article matches every word of “\(text)”\(issue.map { " in \($0)" } ?? "")\n")
            }
            for article in results.articles {
                Terminal.standardOutput.write("\(article.globalID)  \(article.title)\n    \(article.snippet ?? "")\n")
            }
        }
    }
}
