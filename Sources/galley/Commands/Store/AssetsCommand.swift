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
            // Each asset printed as the store reads it (the list is never whole in memory),
            // the lines in pieces of about 64 KiB rather than a write each.
            var pending = ""
            func write(_ text: String) {
                pending += text
                if pending.utf8.count >= 65_536 { flush() }
            }
            func flush() {
                if !pending.isEmpty { console.data(pending) }
                pending = ""
            }
            defer { flush() }
            if output.json {
                do {
                    return try console.timed("query") {
                        try JSONDocument.streamList(key: "assets", write: write) { send in try opened.eachAsset(filter, send) }
                    }
                } catch let ended as JSONDocument.ListEndedByError {
                    // The document on standard output carries the error already.
                    flush()
                    console.err.report(ended.error)
                    throw Status.couldNotRun
                }
            }
            var listed = 0
            try console.timed("query") {
                try opened.eachAsset(filter) { asset in
                    write("\(asset.globalID)  \(asset.kind)  \(asset.path)\n")
                    listed += 1
                }
            }
            if listed == 0 { try store.explainEmpty("assets", in: opened, console) }
        }
    }
}
