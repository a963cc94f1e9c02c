import ArgumentParser
import Foundation
import GalleyCore
import GalleyKit
import GalleyStore

struct ArticlesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "articles", abstract: "List articles, in issue order (or newest first with --by-date).",
        discussion: """
            With --json: {"articles": [...]} (docs/json/articles.schema.json). With --independent, \
            the articles that belong to no issue (from galley import --articles and article \
            feeds), newest first: {"articles": [...]} (docs/json/independent-articles.schema.json).
            """)

    @Flag(help: "The independent articles (no issue), newest first, instead.")
    var independent = false

    @Option(help: "Only this issue (global id or apple_id); an unknown issue is an error.",
            completion: .custom(StoreCompletion.issueIDs))
    var issue: String?
    @Option(help: "Only this type.")
    var type: String?
    @Option(help: "Leave out this type.")
    var excludeType: String?
    @Flag(help: "Only featured articles.")
    var featured = false
    @Option(help: "Only articles with this keyword (a whole keyword, not a substring).")
    var keyword: String?
    @Flag(help: "Newest first instead of issue order.")
    var byDate = false
    @Option(help: "At most this many.")
    var limit: Int?
    @Option(help: "With --limit: the page, from 0.")
    var page = 0

    @OptionGroup var store: StoreOptions
    @OptionGroup var output: OutputOptions

    /// `{"articles": [...]}`: article newer/older (the listing writes the same shape as it reads).
    struct Document: Encodable { var articles: [StoredArticle] }

    struct IndependentDocument: Encodable { var articles: [IndependentArticle] }

    func validate() throws {
        if independent, issue != nil || type != nil || excludeType != nil || featured || keyword != nil || byDate || limit != nil {
            throw ValidationError("--independent lists every independent article; it takes no filter")
        }
    }

    func run() throws {
        let console = output.console
        if independent {
            return try console.run {
                let listed = try store.open().independentArticles()
                if output.json { return console.emit(IndependentDocument(articles: listed)) }
                if listed.isEmpty { console.note("no independent articles in the store (galley import --articles, or sync an article feed)") }
                for article in listed { console.data("\(article.globalID)  \(article.date.map(DumplingDate.rfc3339) ?? "-")  \(article.title)\n") }
            }
        }
        try console.run {
            let filter = ArticleFilter(issue: issue, type: type, excludeType: excludeType, featured: featured, keyword: keyword,
                                       byDate: byDate, limit: limit, page: page)
            let opened = try store.open()
            // Timed as a whole: the rows are read while they are printed.
            let listed = try console.timed("listing") {
                try console.streamListing(key: "articles", line: { "\($0.globalID)  \($0.title)  [\($0.type)]\n" }) { send in
                    try opened.eachArticle(filter, send)
                }
            }
            if listed == 0 && !output.json { try store.explainEmpty("articles", in: opened, console) }
        }
    }
}

struct ArticleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "article", abstract: "Show one article.", subcommands: [Show.self, Newer.self, Older.self])

    struct Selection: ParsableArguments {
        @Argument(help: "The article's global id.")
        var id: String
        @Option(help: "The issue, when several issues have an article with this id.",
                completion: .custom(StoreCompletion.issueIDs))
        var issue: String?
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "An article with its assets (and their paths in the store), and its issue's newer and older articles.",
            discussion: """
                With --json: the article, its body and fields, assets, newer and older \
                (docs/json/article-show.schema.json); with --meta KEY: {"key", "value"} \
                (docs/json/article-meta.schema.json).
                """)
        @OptionGroup var selection: Selection
        @Option(help: ArgumentHelp("Print only this custom metadata value.", valueName: "key"))
        var meta: String?
        @OptionGroup var store: StoreOptions
        @OptionGroup var output: OutputOptions

        struct MetaDocument: Encodable {
            var key: String
            var value: JSONValueBox
        }

        func run() throws {
            let console = output.console
            try console.run {
                let opened = try store.open()
                // `newer` and `older` list the rest of the issue: written as they are read.
                if output.json && meta == nil {
                    return try console.streamDocument { write in
                        try opened.writeArticleDocument(selection.id, issue: selection.issue, write: write)
                    }
                }
                // The article alone: neither its metadata nor the lines below show its neighbours.
                let detail = try console.timed("query") { try opened.article(selection.id, issue: selection.issue, neighbours: []) }
                if let meta {
                    guard let value = detail.meta(meta) else {
                        throw GalleyError("the article has no custom metadata `\(meta)`", id: .notFound,
                                          hint: "`galley article show \(selection.id) --json` lists its custom_meta.")
                    }
                    if output.json { return console.emit(MetaDocument(key: meta, value: JSONValueBox(value))) }
                    console.data((value.stringValue ?? JSONWriter(pretty: false).encode(value)) + "\n")
                    return
                }
                console.data("\(detail.article.title)\n\(detail.article.globalID) · issue \(detail.article.issueGlobalID) · \(detail.article.type) · \(DumplingDate.rfc3339(detail.article.date))\n")
                for asset in detail.assets { console.data("  \(asset.kind) \(asset.placement): \(asset.path)\n") }
            }
        }
    }

    struct Newer: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "newer", abstract: "Articles of the same issue with a later date, nearest first.")
        @OptionGroup var selection: Selection
        @OptionGroup var store: StoreOptions
        @OptionGroup var output: OutputOptions

        func run() throws { try ArticleCommand.printNeighbours(selection, store, output, newer: true) }
    }

    struct Older: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "older", abstract: "Articles of the same issue with an earlier date, nearest first.")
        @OptionGroup var selection: Selection
        @OptionGroup var store: StoreOptions
        @OptionGroup var output: OutputOptions

        func run() throws { try ArticleCommand.printNeighbours(selection, store, output, newer: false) }
    }

    static func printNeighbours(_ selection: Selection, _ store: StoreOptions, _ output: OutputOptions, newer: Bool) throws {
        let console = output.console
        try console.run {
            let opened = try store.open()
            let wanted: ArticleNeighbour = newer ? .newer : .older
            // As the store reads them: the neighbours of an article of a large issue are the rest of it.
            _ = try console.streamListing(key: "articles", line: { (article: StoredArticle) in "\(article.globalID)  \(article.title)\n" }) { send in
                try opened.eachArticleNeighbour(selection.id, issue: selection.issue, sides: [wanted], begin: { _ in }) { _, article in
                    try send(article)
                }
            }
        }
    }
}
