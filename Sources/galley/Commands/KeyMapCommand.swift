import ArgumentParser
import Foundation
import GalleyCore
import GalleyFormats
import GalleyStore

struct KeyMapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key-map", abstract: "Check a key map for a foreign feed of articles, and what it makes of a sample.",
        subcommands: [Check.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check a key map, and show what each item of a sample feed becomes.",
            discussion: """
                A key map (docs/key-maps.md) says, with JSON Pointers, where a foreign feed's \
                items are and which of their values make each article field, with fallbacks, \
                defaults and date formats. The map is checked first: an unknown key or field, a \
                pointer that is not one, or a missing global_id or title is an error naming the \
                file, line and column (exit 2). With a sample, each item is mapped: the articles \
                are printed, and each skipped item is reported with its index, the pointer and \
                the field (exit 1 when any is skipped). Nothing is stored.
                With --json: {"articles": [...], "skipped": [...]} (docs/json/key-map-check.schema.json).

                Examples:
                  galley key-map check Examples/key-maps/wordpress-posts.yaml
                  galley key-map check Examples/key-maps/wordpress-posts.yaml Examples/key-maps/wordpress-posts.sample.json
                  galley key-map check Examples/key-maps/rss-atom.yaml Examples/key-maps/rss.sample.xml
                """)

        @Argument(help: "The key map (YAML).", completion: .file(extensions: ["yaml", "yml"]))
        var map: String

        @Argument(help: "A sample of the feed (JSON, or RSS or Atom XML).", completion: .file(extensions: ["json", "xml", "rss", "atom"]))
        var sample: String?

        @OptionGroup var output: OutputOptions

        struct Document: Encodable {
            var articles: [IndependentArticle]
            var skipped: [KeyMap.Skipped]
            var sanitized: [KeyMap.Sanitized]
        }

        func run() throws {
            let console = output.console
            var skipped = false
            try console.run {
                let keyMap = try KeyMap(contentsOf: map)
                guard let sample else {
                    if output.json { return console.emit(Document(articles: [], skipped: [], sanitized: [])) }
                    return console.status("\(map): a valid key map")
                }
                let document = try XMLFeed.file(sample, what: "the sample", hint: "Give a saved answer of the feed (JSON, RSS or Atom), e.g. curl -o sample.json URL.")
                let result = try keyMap.map(document, source: sample)
                skipped = !result.skipped.isEmpty
                if output.json { return console.emit(Document(articles: result.articles, skipped: result.skipped, sanitized: result.sanitized)) }
                for item in result.skipped { console.err.report(ArticlesSummary.error(item, source: sample)) }
                for item in result.sanitized { console.note(ArticlesSummary.note(item, source: sample)) }
                for article in result.articles {
                    console.data("\(article.globalID)  \(article.date.map(DumplingDate.rfc3339) ?? "-")  \(article.title)"
                                 + (article.keywords.isEmpty ? "" : "  [\(article.keywords.joined(separator: ", "))]") + "\n")
                }
                console.status("\(result.articles.count) articles, \(result.skipped.count) skipped"
                               + (result.sanitized.isEmpty ? "" : ", \(result.sanitized.count) sanitized"))
            }
            if skipped { throw Status.problems }
        }
    }
}
