import ArgumentParser
import Foundation
import GalleyCore
import GalleyPublish
import GalleySigning
import GalleyStore

struct PublishCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Write the store as static files a web server, a static host or a bucket's CDN serves.",
        discussion: """
            Writes what a reader app and galley sync need as plain files, into a folder or an \
            S3-compatible bucket, at the same paths as galley serve's API: feed.json (with feed.json.sig beside it when --signing-key is \
            given), packages/{apple_id}.json, each issue's zip at packages/{apple_id}/{sha256}.zip, \
            issues.json, issues/{apple_id}.json, issues/{apple_id}/assets.json, \
            articles/{global_id}.json, and every asset's file at \
            issues/{global_id}/files/{sha256}/{name}. Links are relative to the site's root \
            unless --public-url is given.

            Incremental: a second publish writes only what changed, writes feed.json after \
            everything it names, and only then removes the files of the last publish that \
            nothing names any more (a reader never sees a feed that names a missing file). \
            Content-addressed files never change: serve them with a long cache lifetime, \
            and the JSON files with a short one (docs/publish.md).

            To a bucket (--to s3://BUCKET/PREFIX): the credentials, region and endpoint come \
            from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION and \
            AWS_ENDPOINT_URL (for a service other than AWS). Each object carries its media type \
            and Cache-Control: content-addressed ones immutable, the JSON ones as \
            --shared-max-age and --stale-while-revalidate say. The bucket must let readers GET \
            (a public-read policy, or a CDN with access to it).

            A signed feed's signature expires after --signature-lifetime: publish again \
            (from cron) well before it does, or galley sync --trust-key warns.

            With --json: the document of docs/json/publish.schema.json.

            Examples:
              galley publish --store store --to /var/www/issues
              galley publish --store store --to build/site --public-url https://cdn.example.com/issues
              galley publish --store store --to build/site --signing-key /etc/galley/feed.key
              AWS_ENDPOINT_URL=https://minio.example.com galley publish --store store --to s3://issues/harbour
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: ArgumentHelp("The folder to write the site into (made if missing), or s3://BUCKET/PREFIX.", valueName: "folder|s3-url"),
            completion: .directory)
    var to: String

    @Option(help: ArgumentHelp("The address the site is reached at, for absolute links (default: links relative to the site's root).",
                               valueName: "url"))
    var publicURL: String?

    @Option(help: ArgumentHelp("Sign feed.json with this private key (from galley keys generate) into feed.json.sig.", valueName: "file"),
            completion: .file(extensions: ["key"]))
    var signingKey: String?

    @Option(help: ArgumentHelp("How long the signature holds.", valueName: "duration"))
    var signatureLifetime = Seconds(7 * 86_400)

    /// A bucket's JSON objects carry it; a folder's web server sets its own.
    @OptionGroup var caching: JSONCacheOptions

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard !to.isEmpty else { throw ValidationError("--to is empty: give the folder or s3://BUCKET/PREFIX to publish into") }
        try signatureLifetime.require(60...366 * 86_400, "--signature-lifetime")
        try validatePublicURL(publicURL, example: "https://cdn.example.com/issues")
    }

    func run() throws {
        let console = output.console
        try console.run {
            // A wrong bucket address or missing credentials: said before the store is opened.
            var options = PublishOptions(destination: try PublishDestination.parse(to, environment: ProcessInfo.processInfo.environment))
            let opened = try store.open(.read)
            options.sharedMaxAge = Int(caching.sharedMaxAge.seconds)
            options.staleWhileRevalidate = Int(caching.staleWhileRevalidate.seconds)
            options.publicURL = publicURL
            options.signingKey = try signingKey.map { try FeedSigningKey(contentsOf: $0) }
            options.signatureLifetime = signatureLifetime.interval
            let bar = console.progressBar("publishing")
            var done: Int64 = 0
            let total = Int64((try? opened.packages().count) ?? 0)
            let report = try Publisher(store: opened, options: options).publish { appleID in
                bar?.update(done: done, total: total, detail: appleID)
                done += 1
            }
            bar?.clear()
            if output.json { return console.emit(report) }
            console.status("published \(report.issues) issue\(report.issues == 1 ? "" : "s") to \(report.to): "
                           + "\(report.written) written, \(report.unchanged) unchanged, \(report.removed) removed")
        }
    }
}
