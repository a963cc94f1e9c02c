import ArgumentParser
import Foundation
import GalleyCore
import GalleyFormats
import GalleyKit
import GalleyServe

struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Serve a source folder's preview site and rebuild it as you edit.",
        discussion: """
            Renders SOURCE as `galley render SOURCE --output DIR` does, serves the site on this \
            machine, and watches SOURCE: when a file changes, the site is rebuilt and every open \
            page whose own page changed (or the style, or any picture) reloads by itself. An \
            edit that does not build keeps the last good site; the error is printed here and in \
            the browser's console. Hugo's `hugo server` is the model.

            Stops on Ctrl-C or SIGTERM.

            Examples:
              galley preview Examples/winter-2026
              galley preview Examples/winter-2026 --port 0 --json
            """)

    @Argument(help: ArgumentHelp("The issue source folder.", valueName: "source"), completion: .directory)
    var source: String

    @Option(help: "The address to listen on (127.0.0.1: this machine only).")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port, printed when listening).")
    var port = 8000

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
    }

    func run() throws {
        let console = output.console
        try console.run {
            // The input checks render makes: a missing path, a zip or a manifest is said as such.
            guard case .source(let folder) = try IssueInput.detect(source) else {
                throw GalleyError("not an issue source folder: preview watches a folder you edit", id: .inputKind, path: source,
                                  hint: "Give the issue's source folder (with issue.yaml), e.g. galley preview Examples/winter-2026; `galley render` takes zips.")
            }
            // Every build makes the site's thumbnails: libvips's buffers, taken and freed on many
            // threads, share one heap (300 articles of photos, two at once: 91 MB after a
            // rebuild, 129 MB with a heap per thread).
            FreedMemory.oneHeap()
            var options = RenderOptions()
            options.page = true
            let preview = PreviewServer(source: folder, options: options)
            let summary = try console.timed("first build") { try preview.build() }
            console.findings(summary.warnings)
            var settings = ServeOptions(host: host, port: port)
            settings.logLevel = output.quiet ? .warning : output.verbose ? .info : .notice
            let (path, articles) = (folder.path, summary.articles)
            try serveUntilStopped(host: host, port: port, json: output.json, quiet: output.quiet, what: "the preview") { [host] port in
                let listening = PreviewListening(url: "http://\(host):\(port)/", port: port, source: path, articles: articles)
                return (listening, "previewing \(path) on \(listening.url) (\(articles) articles); edits rebuild it")
            } run: { [settings] onListening in
                try await preview.run(settings, onListening: onListening)
            }
        }
    }
}

/// What `preview --json` prints once it listens.
struct PreviewListening: Encodable {
    var url: String
    var port: Int
    var source: String
    var articles: Int
}
