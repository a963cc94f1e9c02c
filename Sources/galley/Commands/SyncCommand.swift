import ArgumentParser
import Foundation
import GalleyCore
import GalleyFormats
import GalleySigning
import GalleyStore
import GalleyStoreBackends
import GalleySync

struct SyncCommand: ParsableCommand {
    enum Events: String, ExpressibleByArgument, CaseIterable {
        case json
    }

    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Follow a package feed into the store: download what changed, keep old content on any failure.",
        discussion: """
            Reads a feed (galley serve's /feed, or a Drupal-packager-style endpoint answering \
            {"version", "file_path"}; or a feed of articles: galley serve's \
            /independent-articles, or a foreign one with --key-map, merged into the store's \
            independent articles by global id, docs/key-maps.md) with one conditional request: when nothing changed the \
            server answers 304 and nothing is written. Each package whose SHA-256 the store does \
            not hold is downloaded into the store's downloads/ folder (resumed with Range and \
            If-Range after a cut connection), checked against the feed's size and SHA-256, and \
            imported through the same checks and atomic import as galley import. Cut \
            connections, 5xx and 429 answers are retried (--retries) with backoff, as \
            Retry-After asks when the server says. A failure leaves that issue's old content in \
            the store, and the next sync picks up where this one stopped; a signed feed whose \
            revision went down (a rollback) is refused (--reset-revision follows it), an \
            unsigned one is followed with a warning (feedWentBack). The feed decides each \
            issue's version: an older one it names (a restored release) replaces the newer. Issues the feed stopped listing are reported, and \
            removed only with --prune. A store that does not exist yet is made once the feed \
            has been fetched and checked: a first sync that cannot read the feed leaves none.

            A new version of an issue the store holds is a delta update: the new zip's central \
            directory is read with a ranged request at its end, every entry the held zip has \
            byte for byte is copied from it, and only the rest is fetched (a few ranged \
            requests), then the whole file is checked against the feed's SHA-256. A host without \
            ranges, a directory that does not match, or a wrong result falls back to the whole \
            download (deltaFallback). --no-delta always downloads whole (docs/sync.md).

            With --trust-key (the .pub file of galley keys generate), a feed that is unsigned, \
            signed by another key, or changed on the way is refused (feed.signature, exit 2) \
            before anything is downloaded, and a feed whose signature expired is warned about \
            (feedExpired): the server may be frozen on old content.

            --events json prints one JSON line per event on standard output, named as Dumpling's \
            notifications (issueDownloadComplete, downloadFailed, downloadComplete...); --json \
            prints the summary (docs/json/sync.schema.json). Exit status: 0 when the store \
            follows the feed, 1 when a package failed or was refused, 2 when the feed could not \
            be read. Run it from cron or a systemd timer (docs/sync.md).

            Examples:
              galley sync http://127.0.0.1:8080/feed --store reader-store
              galley sync https://issues.example.com/feed --events json
              galley sync https://issues.example.com/feed --trust-key feed.pub --prune
            """)

    @Argument(help: "The feed's address.")
    var url: String

    @OptionGroup var store: StoreOptions
    @OptionGroup var output: OutputOptions

    @Option(help: "Attempts after the first, for the feed and for each package.")
    var retries = 4

    @Option(help: ArgumentHelp("How long to wait for a connection, and for a silent server.", valueName: "duration"))
    var timeout = Seconds(30)

    @Flag(help: "Remove issues the feed no longer lists (takedowns). Without it they are reported and kept.")
    var prune = false

    @Flag(help: "Download every new version whole instead of rebuilding it from the held version (a delta update).")
    var noDelta = false

    @Flag(help: "Forget the revision this store followed, so a feed that went back (feed.rollback) is followed from its revision now.")
    var resetRevision = false

    @Option(help: ArgumentHelp("Read the feed as a foreign feed of articles (JSON, RSS or Atom) through this key map (docs/key-maps.md).", valueName: "file"),
            completion: .file(extensions: ["yaml", "yml"]))
    var keyMap: String?

    @Option(help: ArgumentHelp("With --key-map: read at most this many pages of a paged feed, following its Link: rel=\"next\" headers (WordPress's REST API pages so).",
                               valueName: "count"))
    var maxPages = 50

    @Option(help: ArgumentHelp("Accept only a feed signed with this public key (from galley keys generate).", valueName: "file"),
            completion: .file(extensions: ["pub"]))
    var trustKey: String?

    @Flag(help: "Sync once and exit (the default): for cron and systemd timers (docs/sync.md).")
    var once = false

    @Option(help: ArgumentHelp("Keep running, syncing again this long after each round ends (10m, 1h): for a service without a timer.",
                               valueName: "duration"))
    var every: Seconds?

    @Option(help: "Print each event as one JSON line on standard output.")
    var events: Events?

    func validate() throws {
        guard (0...20).contains(retries) else { throw ValidationError("--retries must be from 0 to 20") }
        guard (1...1000).contains(maxPages) else { throw ValidationError("--max-pages must be from 1 to 1000") }
        try timeout.require(1...3600, "--timeout")
        if events != nil && output.json { throw ValidationError("give --events json or --json, not both: both write to standard output") }
        if let every {
            try every.require(1...7 * 86_400, "--every")
            if once { throw ValidationError("give --once or --every, not both") }
            if output.json { throw ValidationError("--every prints one summary per round: use --events json instead of --json") }
        }
    }

    func run() throws {
        let console = output.console
        try console.run {
            // A bad address creates no store.
            _ = try FeedSyncer.feedURL(url)
            let trusted = try trustKey.map { try FeedTrustKey(contentsOf: $0) }
            let map = try keyMap.map { try KeyMap(contentsOf: $0) }
            var options = SyncOptions(url: url)
            options.retries = retries
            options.prune = prune
            options.delta = !noDelta
            options.resetRevision = resetRevision
            options.trustKey = trusted
            options.keyMap = map
            options.maxPages = maxPages
            options.connectTimeout = min(timeout.seconds, 10)
            options.idleTimeout = timeout.seconds
            // A store that does not exist yet is made once the feed has been fetched and
            // checked: a first sync that fails before that leaves none behind.
            let syncer = try FeedSyncer(location: store.location, stores: StoreBackends(), options: options)
            guard let every = every?.interval else { return try round(syncer, console) }
            // --every: rounds until stopped. SIGTERM (systemd stopping the service) and Ctrl-C
            // end it at once, whatever the round is doing: an import is atomic and a download
            // resumes, so any moment is safe. A round that fails is reported and the next one
            // tries again.
            let stops = Interrupts.exitOnStop()
            defer { stops.end() }
            while true {
                do {
                    try round(syncer, console)
                } catch let error as GalleyError {
                    if events == nil { console.err.report(error) }
                } catch is ExitCode {
                    // Status.problems: reported by the round.
                }
                Thread.sleep(forTimeInterval: every)
            }
        }
    }

    /// One sync: events or the summary printed; `Status.problems` when a package failed or an
    /// article was skipped.
    func round(_ syncer: FeedSyncer, _ console: Console) throws {
        let lines = events == .json
        // A bar on a terminal (not with --events, --json or --quiet), one download at a time.
        let bar: SharedProgressBar? = lines ? nil : SharedProgressBar(console.progressBar("downloading"))
        var progress: FeedSyncer.Progress?
        if let bar { progress = { name, done, total in bar.update(name, done, total) } }
        let summary = try runToEnd { [progress] in
            try await syncer.run(progress: progress) { event in
                if event.event != .downloadStarted { bar?.clear() }
                if lines {
                    console.out.write(JSONDocument.compact(event) + "\n")
                } else if event.event == .retrying, let error = event.error {
                    console.note("\(error.message); trying again in \(event.seconds ?? 0) s")
                } else if event.event == .deltaFallback, let error = event.error {
                    console.note("\(event.appleID ?? ""): \(error.message); downloading it whole")
                } else if [.feedExpired, .feedWentBack, .feedPagesLeft].contains(event.event), let error = event.error {
                    console.err.write("warning: \(error.message)\n    hint: \(error.hint ?? "")\n")
                }
            }
        }
        if output.json { console.emit(summary) }
        if !lines {
            if summary.unchanged {
                console.status("\(url): unchanged since the last sync (revision \(summary.revision.map(String.init) ?? "-"))")
            }
            for result in summary.imported {
                let cost = summary.downloads.first { $0.appleID == result.appleID }
                let delta = cost.map { $0.delta ? " (delta: \(formatBytes($0.bytesFetched)) fetched, \(formatBytes($0.bytesReused)) reused)" : "" } ?? ""
                console.status("\(result.appleID): \(result.status.rawValue)\(delta)")
            }
            if let articles = summary.articles {
                console.status("articles: \(articles.added.count) added, \(articles.updated.count) updated, \(articles.unchanged) unchanged"
                               + (articles.skipped.isEmpty ? "" : ", \(articles.skipped.count) skipped")
                               + (articles.sanitized.isEmpty ? "" : ", \(articles.sanitized.count) sanitized"))
            }
            if !summary.current.isEmpty { console.status("\(summary.current.count) issues already current") }
            for appleID in summary.notInFeed where !summary.removed.contains(appleID) {
                console.note("\(appleID): in the store but no longer in the feed (kept; --prune removes it)")
            }
            for appleID in summary.removed { console.status("\(appleID): removed, the feed no longer lists it") }
            if !summary.unchanged { console.status("into \(store.named)") }
        }
        for failure in summary.failures where !output.json && !lines { console.err.report(failure.error) }
        for skipped in summary.articles?.skipped ?? [] where !output.json && !lines {
            console.err.report(ArticlesSummary.error(skipped, source: url))
        }
        for sanitized in summary.articles?.sanitized ?? [] where !output.json && !lines {
            console.note(ArticlesSummary.note(sanitized, source: url))
        }
        if !summary.failures.isEmpty || !(summary.articles?.skipped.isEmpty ?? true) { throw Status.problems }
    }
}

/// A progress bar the sync's task may draw from: downloads run one after another, and the lock
/// keeps a redraw and a clear from interleaving.
final class SharedProgressBar: @unchecked Sendable {
    private let lock = NSLock()
    private let bar: ProgressBar

    init?(_ bar: ProgressBar?) {
        guard let bar else { return nil }
        self.bar = bar
    }

    func update(_ name: String, _ done: Int64, _ total: Int64?) {
        lock.withLock {
            bar.update(done: done, total: total ?? max(done, 1), detail: "\(name) \(formatBytes(done))" + (total.map { " of \(formatBytes($0))" } ?? ""))
        }
    }

    func clear() { lock.withLock { bar.clear() } }
}
