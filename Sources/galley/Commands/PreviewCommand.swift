import ArgumentParser
import Dispatch
import Foundation
import GalleyCore
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
            let folder = URL(fileURLWithPath: source)
            guard FileStatus(folder.path)?.kind == .directory else {
                throw GalleyError("no source folder here", id: .inputNotFound, path: source,
                                  hint: "Give an issue source folder (one with issue.yaml), e.g. galley preview Examples/winter-2026.")
            }
            var options = RenderOptions()
            options.page = true
            let preview = PreviewServer(source: folder, options: options)
            let summary = try console.timed("first build") { try preview.build() }
            console.findings(summary.warnings)
            let finished = DispatchSemaphore(value: 0)
            let failure = FailureBox()
            let (host, quiet, json) = (host, output.quiet, output.json)
            var settings = ServeOptions(host: host, port: port)
            settings.logLevel = quiet ? .warning : output.verbose ? .info : .notice
            Task {
                do {
                    try await preview.run(settings) { port in
                        failure.listening = true
                        let listening = PreviewListening(url: "http://\(host):\(port)/", port: port, source: folder.path, articles: summary.articles)
                        if json {
                            Terminal.standardOutput.write(JSONDocument.encode(listening))
                        } else if !quiet {
                            Terminal.standardOutput.write("previewing \(folder.path) on \(listening.url) (\(summary.articles) articles); edits rebuild it\n")
                        }
                    }
                } catch {
                    failure.error = error
                }
                finished.signal()
            }
            finished.wait()
            if let error = failure.error {
                guard failure.listening else {
                    throw GalleyError("cannot listen on \(host):\(port): \(error)", id: .failed,
                                      hint: "Another program may have the port: choose another with --port (0 takes any free one).")
                }
                throw GalleyError("the preview stopped: \(error)", id: .failed)
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
