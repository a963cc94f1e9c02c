import Foundation
import GalleyCore
import GalleyKit
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// `galley preview`: a source folder's preview site (as `galley render --output` makes it),
/// served on loopback and rebuilt when a file of the source changes (inotify); open pages
/// reload themselves through server-sent events when their own page (or the style or an asset)
/// changed. A rebuild that fails keeps the last good site and tells the pages why.
public final class PreviewServer: @unchecked Sendable {
    public let source: URL
    let renderer: Renderer
    private let work: URL
    private let lock = NSLock()
    private var site: URL?
    /// The current site's files and their digests, so a rebuild hashes only the new one.
    private var digests: [String: String] = [:]
    private var generation = 0
    /// The last rebuild's failure, as the `failure` event gives it (nil: the site builds).
    private var lastFailure: Failure?
    private let events = Broadcaster()
    private let changes: AsyncStream<Void>
    private let signalChange: AsyncStream<Void>.Continuation
    private var watcher: FileWatcher?

    public init(source: URL, options: RenderOptions = RenderOptions()) {
        self.source = source.standardizedFileURL
        renderer = Renderer(options: options)
        work = FileManager.default.temporaryDirectory.appending(path: "galley-preview-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        (changes, signalChange) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Starts watching, then the first build: an error in either is the command's error
    /// (nothing listens yet). Edits from here on are picked up by `watchAndRebuild`.
    public func build() throws -> Renderer.SiteSummary {
        let watcher = FileWatcher(root: source) { [signalChange] _ in signalChange.yield() }
        try watcher.start()
        lock.withLock { self.watcher = watcher }
        do {
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let (summary, _) = try rebuild()
            return summary
        } catch {
            shutdown()
            try? FileManager.default.removeItem(at: work)
            throw error
        }
    }

    /// Renders a new generation beside the current one and switches to it; returns the site's
    /// paths whose bytes changed (`*` when the style or an asset did: every page reloads).
    @discardableResult
    func rebuild() throws -> (Renderer.SiteSummary, [String]) {
        lock.lock()
        generation += 1
        let next = work.appending(path: "site-\(generation)")
        let (previous, before) = (site, digests)
        lock.unlock()
        let summary = try renderer.renderSite(from: source, to: next, force: true)
        let after = Self.digests(next)
        let changed = Self.differences(before, after)
        lock.lock()
        site = next
        digests = after
        lastFailure = nil
        lock.unlock()
        if let previous { try? FileManager.default.removeItem(at: previous) }
        return (summary, changed)
    }

    /// Every file of a site, by relative path, with its SHA-256.
    static func digests(_ root: URL) -> [String: String] {
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [:] }
        var result: [String: String] = [:]
        while let relative = walker.nextObject() as? String {
            let path = root.appending(path: relative).path
            if FileStatus(path)?.kind == .file { result[relative] = (try? FileDigest.of(path))?.sha256 ?? "" }
        }
        return result
    }

    /// Relative paths that differ between two sites (added, removed or other bytes); `*` first
    /// when a file other than a page did (the style, an asset: every page reloads).
    static func differences(_ before: [String: String], _ after: [String: String]) -> [String] {
        let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
        return changed.contains { !$0.hasSuffix(".html") } ? ["*"] + changed : changed
    }

    func currentSite() -> URL? {
        lock.lock()
        defer { lock.unlock() }
        return site
    }

    /// Rebuilds on change (debounced) and tells the pages. Runs until graceful shutdown,
    /// which also ends every open event stream (so shutdown does not wait on them) and
    /// removes the work folder.
    func watchAndRebuild(logger: Logger) async throws {
        await withGracefulShutdownHandler {
            for await _ in changes {
                // Editors write in bursts (temporary file, rename, chmod): wait for the last.
                try? await Task.sleep(for: .milliseconds(150))
                let failedBefore = lock.withLock { lastFailure != nil }
                do {
                    // Seconds of rendering: on NIO's thread pool, not on the event loops that
                    // answer the pages (Swift tasks run on them, see runTasksOnEventLoops).
                    let (_, changed) = try await NIOThreadPool.singleton.runIfActive { try self.rebuild() }
                    if failedBefore {
                        logger.notice("the site builds again")
                        events.send("event: fixed\ndata: {}\n\n")
                    }
                    if !changed.isEmpty {
                        logger.notice("rebuilt: \(changed.filter { $0 != "*" }.joined(separator: ", "))")
                        events.send("event: change\ndata: \(JSONDocument.compact(changed))\n\n")
                    }
                } catch {
                    let failure = Failure(error, base: source.path)
                    // An editor's save is several file events: the same failure is told once.
                    let repeated = lock.withLock {
                        defer { lastFailure = failure }
                        return lastFailure == failure
                    }
                    if !repeated {
                        logger.error("rebuild failed, still serving the last good site:\n\(failure.text.trimmingCharacters(in: .newlines))")
                        events.send(failure.event)
                    }
                }
            }
        } onGracefulShutdown: { [self] in
            shutdown()
        }
        try? FileManager.default.removeItem(at: work)
    }

    func shutdown() {
        lock.lock()
        let watcher = self.watcher
        lock.unlock()
        watcher?.stop()
        signalChange.finish()
        events.finishAll()
    }

    /// A failed rebuild as the pages are told it: the findings as `galley validate` prints
    /// them (`path:line:col: error id: message`, then the hint) and as its JSON gives them.
    struct Failure: Equatable, Encodable {
        var text: String
        var findings: [Diagnostic]

        init(_ error: any Error, base: String) {
            let report = TextReport()
            switch error {
            case let refused as DiagnosticsError:
                findings = refused.diagnostics
                text = report.render(refused.diagnostics, base: base, limitPerCheck: 20)
            case let failed as GalleyError:
                findings = []
                text = report.render(failed)
            default:
                findings = []
                text = report.render(GalleyError("the site could not be built: \(error.localizedDescription)"))
            }
        }

        /// The server-sent event: `failure`, with `{"text", "findings"}`.
        var event: String { "event: failure\ndata: \(JSONDocument.compact(self))\n\n" }
    }

    // MARK: Routes

    static let reloadScript = """
        (function () {
          var here = location.pathname.replace(/^\\//, "") || "index.html";
          var source = new EventSource("/_galley/events");
          source.addEventListener("change", function (event) {
            var changed = JSON.parse(event.data);
            if (changed.indexOf("*") >= 0 || changed.indexOf(here) >= 0) location.reload();
          });
          // A failed rebuild: its findings over the page (as text, never as markup), until
          // the site builds again.
          var box = null;
          source.addEventListener("failure", function (event) {
            var failure = JSON.parse(event.data);
            if (!box) {
              box = document.createElement("pre");
              box.id = "galley-preview-failure";
              box.setAttribute("role", "alert");
              box.style.cssText = "position:fixed;left:0;right:0;bottom:0;max-height:60vh;overflow:auto;margin:0;" +
                "padding:1rem 1.25rem;background:#3b0d0d;color:#fff;font:13px/1.45 ui-monospace,Menlo,monospace;" +
                "white-space:pre-wrap;z-index:2147483647;box-shadow:0 -2px 12px rgba(0,0,0,.4)";
              document.body.appendChild(box);
            }
            box.textContent = "galley preview: the last edit did not build; this is the last good site.\\n\\n" + failure.text;
            console.warn("galley preview: the last edit did not build:\\n" + failure.text);
          });
          source.addEventListener("fixed", function () {
            if (box) { box.remove(); box = null; }
          });
        })();

        """

    /// The policy render's pages carry, as their `<meta>` writes it, and the preview's: the
    /// same, except that this server's own script may run and open its event stream.
    static let pagePolicy = HTMLText.attribute(PageRenderer.noScriptPolicy)
    static let previewPolicy = HTMLText.attribute(PageRenderer.noScriptPolicy
        .replacingOccurrences(of: "script-src 'none'", with: "script-src 'self'; connect-src 'self'"))

    public func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("_galley/reload.js") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "no-store"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: Self.reloadScript)))
        }
        router.get("_galley/events") { _, _ in self.eventStream() }
        router.get("/") { request, context in try await self.file("index.html", request, context) }
        router.get("**") { request, context in
            let path = context.parameters.getCatchAll().joined(separator: "/")
            return try await self.file(path, request, context)
        }
        return router
    }

    func eventStream() -> Response {
        let (stream, id) = events.subscribe()
        let events = self.events
        let failure = lock.withLock { lastFailure }
        let body = ResponseBody { writer in
            defer { events.unsubscribe(id) }
            var greeting = "retry: 1000\n\n"
            if let failure { greeting += failure.event }
            try await writer.write(ByteBuffer(string: greeting))
            for await message in stream {
                try await writer.write(ByteBuffer(string: message))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }

    static let types = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "jpg": "image/jpeg", "jpeg": "image/jpeg",
        "png": "image/png", "gif": "image/gif", "webp": "image/webp", "svg": "image/svg+xml", "mp3": "audio/mpeg",
        "m4a": "audio/mp4", "aac": "audio/aac", "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime",
        "pdf": "application/pdf", "json": "application/json",
    ]

    /// A file of the current site: plain names only (no `..`, no hidden names), HTML pages with
    /// the reload script and a policy that lets only this server's scripts run.
    func file(_ path: String, _ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard let site = currentSite(), !parts.isEmpty, parts.allSatisfy({ part in
            !part.isEmpty && !part.hasPrefix(".") && !part.contains("\\") && !part.unicodeScalars.contains { $0.value < 0x20 }
        }) else {
            return Response(status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: "not in the preview site\n")))
        }
        let url = site.appending(path: path)
        guard FileStatus(url.path)?.kind == .file else {
            return Response(status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: "not in the preview site\n")))
        }
        let type = Self.types[url.pathExtension.lowercased()] ?? "application/octet-stream"
        var headers: HTTPFields = [.contentType: type, .cacheControl: "no-store"]
        if url.pathExtension.lowercased() == "html" {
            var html = try String(contentsOf: url, encoding: .utf8)
            html = html.replacingOccurrences(of: Self.pagePolicy, with: Self.previewPolicy)
            let tag = "<script src=\"/_galley/reload.js\"></script>\n"
            if let end = html.range(of: "</body>", options: .backwards) {
                html.insert(contentsOf: tag, at: end.lowerBound)
            } else {
                html += tag
            }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
        }
        headers[.xContentTypeOptions] = "nosniff"
        return Response(status: .ok, headers: headers, body: try await FileIO().loadFile(path: url.path, context: context))
    }

    /// Serves until SIGINT or SIGTERM; `onListening` gets the bound port.
    public func run(_ settings: ServeOptions, onListening: @escaping @Sendable (Int) -> Void) async throws {
        var logger = Logger(label: "galley.preview", factory: { ServeLogHandler(label: $0) })
        logger.logLevel = settings.logLevel
        let app = Application(
            router: router(),
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "galley-preview"),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? settings.port) },
            logger: logger)
        let watch = PreviewWatch(preview: self, logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: app), .init(service: watch)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// The watcher as a service beside the HTTP server, so one graceful shutdown stops both.
struct PreviewWatch: Service {
    let preview: PreviewServer
    let logger: Logger
    func run() async throws { try await preview.watchAndRebuild(logger: logger) }
}

/// The open event streams: each gets every message; finishing ends them all.
final class Broadcaster: @unchecked Sendable {
    private let lock = NSLock()
    private var streams: [UUID: AsyncStream<String>.Continuation] = [:]
    private var finished = false

    func subscribe() -> (AsyncStream<String>, UUID) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        lock.lock()
        if finished { continuation.finish() } else { streams[id] = continuation }
        lock.unlock()
        return (stream, id)
    }

    func unsubscribe(_ id: UUID) {
        lock.lock()
        streams.removeValue(forKey: id)?.finish()
        lock.unlock()
    }

    func send(_ message: String) {
        lock.lock()
        let all = Array(streams.values)
        lock.unlock()
        for stream in all { stream.yield(message) }
    }

    func finishAll() {
        lock.lock()
        finished = true
        let all = Array(streams.values)
        streams.removeAll()
        lock.unlock()
        for stream in all { stream.finish() }
    }
}
