import ArgumentParser
import Foundation
import GalleyCore
import GalleyServe
import GalleySigning
import GalleyStore
import GalleyStoreBackends

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the issue store as a JSON API with file downloads and the package feed.",
        discussion: """
            Answers GET /issues, /issues/{id}, /issues/{id}/articles, /articles, \
            /articles/{id}, /assets, /search?q= and /healthz in JSON, and each issue's files at \
            /issues/{id}/files/{name} (ETag, Range, If-Range, HEAD). The package feed: \
            /packages/{apple_id} answers {"version", "file_path"} as the Drupal packager did, \
            /feed lists every issue's package, and file_path downloads the zip the store kept \
            at import (older Linechef formats are kept out, with a note). Version 2 (the default) \
            lists articles without bodies; version 1 lists them with bodies and is deprecated. \
            Choose one with a /v1 or /v2 path prefix or the Accept-Version header; every answer \
            says Content-Version. Every JSON answer has a strong ETag: If-None-Match gets 304. \
            docs/serve.md describes each resource.

            Writes: with a token (GALLEY_SERVE_TOKEN or --token-file), POST /issues takes an \
            issue zip as the body (the same checks and atomic import as galley import; 422 with \
            the findings when refused) and DELETE /issues/{id} removes one, each with \
            Authorization: Bearer TOKEN. Without a token, writes are off (403).

            Operations: /healthz, Prometheus metrics at /metrics (request counts and \
            latency histograms by route), one access line per request on standard error \
            (--quiet hides them), gzip for JSON when the client asks, CORS with \
            --cors-origin, and connections closed after --idle-timeout of silence, or when a \
            download's reader takes no chunk (16 to 512 KiB) within --send-timeout. Durations \
            are whole seconds, bare or with s, m, h or d (90, 10m, 7d). At most \
            --max-connections are served at once: one more is answered 503 \
            with Retry-After (but /healthz and /metrics) and closed; downloads share 16 MiB of \
            read buffers, so thousands of slow readers hold 16 KiB each. \
            An answer over 1 MB (a large issue, /assets, an article whose issue is large) is \
            written to a deleted temporary file in TMPDIR (else /tmp) and sent from there: \
            memory stays flat, and TMPDIR needs room for each such answer in flight.

            Signed feeds: with --signing-key (a key from galley keys generate), /feed and \
            /packages/{apple_id} carry a Galley-Signature header (Ed25519) that galley sync \
            --trust-key checks; each signature expires after --signature-lifetime and is \
            renewed every half of it.

            Behind a CDN or proxy: JSON answers may be kept by shared caches for \
            --shared-max-age seconds (and served stale while revalidating for \
            --stale-while-revalidate more); a reader's own cache always revalidates. A file at \
            /issues/{id}/files/{name} revalidates (its content can change), one at \
            /issues/{id}/files/{sha256}/{name} and a zip at /packages/{id}/{sha256}.zip are \
            cached for good. Links name --public-url, else what a --trusted-proxy forwards, \
            else the address the connection reached: never the Host a client sent.

            Stops on Ctrl-C or SIGTERM, letting requests in flight finish.

            Examples:
              galley serve --store store
              galley serve --store store --host 0.0.0.0 --port 8080
              GALLEY_SERVE_TOKEN=$(cat /etc/galley/token) galley serve --store store --public-url https://issues.example.com
              galley serve --store store --signing-key /etc/galley/feed.key
              galley serve --store store --trusted-proxy 127.0.0.1 --shared-max-age 30
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: "The address to listen on (127.0.0.1: this machine only; 0.0.0.0: every interface).")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port, printed when listening).")
    var port = 8080

    @Option(help: ArgumentHelp(
        "The address apps reach this server at, for the feed's file_path links (default: what a --trusted-proxy forwards, else the address the connection reached; never the Host a client sends).",
        valueName: "url"))
    var publicURL: String?

    @Option(help: ArgumentHelp(
        "Believe Forwarded and X-Forwarded-Host/-Proto from this proxy (an address or a CIDR block such as 10.0.0.0/8). Repeat for more.",
        valueName: "address"))
    var trustedProxy: [String] = []

    @OptionGroup var caching: JSONCacheOptions

    @Option(help: ArgumentHelp(
        "Let web pages from this origin read the answers (CORS), e.g. https://reader.example.com; * for any. Repeat for more.",
        valueName: "origin"))
    var corsOrigin: [String] = []

    @Option(help: ArgumentHelp("Close a connection silent for this many seconds (also while its headers trickle in).", valueName: "duration"))
    var idleTimeout = Seconds(30)

    @Option(help: ArgumentHelp("Close a download whose reader takes no chunk (16 to 512 KiB) within this many seconds.", valueName: "duration"))
    var sendTimeout = Seconds(60)

    @Option(help: ArgumentHelp(
        "Serve at most this many connections at once; one more gets 503 and Retry-After (/healthz and /metrics excepted).",
        valueName: "count"))
    var maxConnections = 1024

    @Option(help: ArgumentHelp(
        "Take uploads (POST /issues) and deletions (DELETE /issues/{id}) with the bearer token in this file (default: $GALLEY_SERVE_TOKEN; neither: writes are off).",
        valueName: "file"), completion: .file())
    var tokenFile: String?

    @Option(help: ArgumentHelp("The largest zip an upload may be: bytes, or with K, M or G.", valueName: "size"))
    var maxUpload = "512M"

    @Option(help: ArgumentHelp("Sign the feed with this private key (from galley keys generate).", valueName: "file"),
            completion: .file(extensions: ["key"]))
    var signingKey: String?

    @Option(help: ArgumentHelp("How long a feed signature holds (sync warns about a feed past it).",
                               valueName: "duration"))
    var signatureLifetime = Seconds(7 * 86_400)

    @OptionGroup var output: OutputOptions

    func validate() throws {
        try signatureLifetime.require(2...366 * 86_400, "--signature-lifetime")
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard Self.bytes(maxUpload) != nil else { throw ValidationError("--max-upload must be a size such as 536870912, 512M or 2G") }
        try idleTimeout.require(1...3600, "--idle-timeout")
        try sendTimeout.require(1...3600, "--send-timeout")
        guard (1...1_000_000).contains(maxConnections) else { throw ValidationError("--max-connections must be from 1 to 1000000") }
        for origin in corsOrigin where origin != "*" {
            guard let url = URL(string: origin), ["http", "https"].contains(url.scheme ?? ""), url.host != nil, url.path.isEmpty,
                  !origin.hasSuffix("/") else {
                throw ValidationError("--cors-origin must be * or an origin such as https://reader.example.com (scheme and host, no path)")
            }
        }
        if case .failure(let invalid) = TrustedProxies.parse(trustedProxy) {
            throw ValidationError("--trusted-proxy `\(invalid.entry)` is not an address or CIDR block such as 127.0.0.1, 10.0.0.0/8 or ::1")
        }
        try validatePublicURL(publicURL, example: "https://cdn.example.com")
    }

    func run() throws {
        let console = output.console
        try console.run {
            let location = try store.location
            let token = try Self.token(file: tokenFile, environment: ProcessInfo.processInfo.environment)
            // Writes need a store opened for writing (it must exist: serve never creates one).
            let opened = try StoreBackends().open(location, access: token == nil ? .read : .write)
            var options = ServeOptions(host: host, port: port)
            options.publicURL = publicURL
            options.corsOrigins = corsOrigin
            options.trustedProxies = (try? TrustedProxies.parse(trustedProxy).get()) ?? .none
            options.sharedMaxAge = Int(caching.sharedMaxAge.seconds)
            options.staleWhileRevalidate = Int(caching.staleWhileRevalidate.seconds)
            options.idleTimeout = idleTimeout.seconds
            options.sendTimeout = sendTimeout.seconds
            // Each connection is an open file: the soft limit is raised to fit the cap, and
            // the cap lowered (said once) where the hard limit does not allow it.
            options.maxConnections = ConnectionGate.connectionsThatFit(maxConnections)
            if options.maxConnections < maxConnections {
                console.note("serving at most \(options.maxConnections) connections, not \(maxConnections): the open-file limit (ulimit -n) allows no more")
            }
            options.token = token
            options.maxUpload = Self.bytes(maxUpload) ?? options.maxUpload
            options.signingKey = try signingKey.map { try FeedSigningKey(contentsOf: $0) }
            options.signatureLifetime = signatureLifetime.interval
            // One access line per request at notice; --verbose adds Hummingbird's own.
            options.logLevel = output.quiet ? .warning : output.verbose ? .info : .notice
            let server = GalleyServer(store: opened, options: options)
            // What the feed leaves out, said once to the operator.
            for package in try opened.packages() where package.withheld != nil {
                console.note("\(package.appleID): kept out of the package feed: \(package.withheld ?? "")")
            }
            let path = location.display
            try serveUntilStopped(host: host, port: port, json: output.json, quiet: output.quiet, what: "the server") { [host] port in
                let listening = ServeListening(url: "http://\(host):\(port)", port: port, store: path)
                return (listening, "serving \(path) on \(listening.url)")
            } run: { [options] onListening in
                try await server.run(options, onListening: onListening)
            }
        }
    }
}

extension ServeCommand {
    /// `512M` as bytes (K, M, G are powers of 1024); nil for anything else.
    static func bytes(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = text.uppercased()
        var scale: Int64 = 1
        if let last = digits.last, let unit = units[last] {
            scale = unit
            digits.removeLast()
        }
        guard let value = Int64(digits), value > 0, value <= Int64.max / scale else { return nil }
        return value * scale
    }

    /// The write token: the first line of `--token-file`, else `$GALLEY_SERVE_TOKEN`, else nil.
    static func token(file: String?, environment: [String: String]) throws -> String? {
        if let file {
            let text: String
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw GalleyError("cannot read the token file", id: .inputUnreadable, path: file,
                                  hint: "Write the token on its first line, readable by this user only (chmod 600).")
            }
            let line = text.split(whereSeparator: \.isNewline).first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
            guard line.utf8.count >= 16 else {
                throw GalleyError("the token in the file is shorter than 16 characters", id: .configuration, path: file,
                                  hint: "Make a long random one: openssl rand -hex 32 > \(file)")
            }
            return line
        }
        guard let token = environment["GALLEY_SERVE_TOKEN"]?.trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty else { return nil }
        guard token.utf8.count >= 16 else {
            throw GalleyError("GALLEY_SERVE_TOKEN is shorter than 16 characters", id: .configuration,
                              hint: "Make a long random one: export GALLEY_SERVE_TOKEN=$(openssl rand -hex 32)")
        }
        return token
    }
}

/// What `serve --json` prints once it listens.
struct ServeListening: Encodable {
    var url: String
    var port: Int
    var store: String

}
