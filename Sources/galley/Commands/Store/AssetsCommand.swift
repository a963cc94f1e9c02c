import ArgumentParser
import Foundation
import GalleyCore
import GalleyKit
import GalleyStore

struct AssetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assets",
        abstract: "List assets with their file paths in the store.",
        discussion: """
            galley assets --issue ID                  every asset of the issue
            galley assets --article ID --playlist     the article's sounds, in order
            galley assets --issue ID --cover          the issue's first image (its cover)
            galley assets --article ID --first        the article's first image
            galley assets --issue ID --count          how many

            With --json: {"assets": [...]}, or {"count": N} with --count \
            (docs/json/assets.schema.json).
            """)

    @Option(help: "Only this issue's assets (global id or apple_id).", completion: .custom(StoreCompletion.issueIDs))
    var issue: String?
    @Option(help: "Only this article's assets.")
    var article: String?
    @Option(help: "Only this kind.")
    var type: MediaKind?
    @Flag(help: "The article's sounds in order (same as --type sound).")
    var playlist = false
    @Flag(help: "The issue's own first image: its cover.")
    var cover = false
    @Flag(help: "Only the first image.")
    var first = false
    @Flag(help: "Print how many there are.")
    var count = false
    @OptionGroup var store: StoreOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        let console = output.console
        try console.run {
            let filter = AssetFilter(issue: issue, article: article, kind: playlist ? .sound : type, issueOwn: cover, first: cover || first)
            let opened = try store.open()
            if count {
                let counted = try console.timed("query") { try opened.assetCount(filter) }
                if output.json { return console.emit(AssetCount(count: counted)) }
                console.data("\(counted)\n")
                return
            }
            // Timed as a whole: the rows are read while they are printed.
            let listed = try console.timed("listing") {
                try console.streamListing(key: "assets", line: { "\($0.globalID)  \($0.kind)  \($0.path)\n" }) { send in
                    try opened.eachAsset(filter, send)
                }
            }
            if listed == 0 && !output.json { try store.explainEmpty("assets", in: opened, console) }
        }
    }
}
