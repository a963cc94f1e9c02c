import Foundation
import GalleyCore
import GalleyS3
import GalleyStore

/// Where a PostgreSQL store is: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE?blobs=FOLDER`.
///
/// The catalogue (issues, articles, assets, search, packages, sync records) lives in the
/// database; the files (every zip's files and the kept zips) in a blob folder addressed by
/// SHA-256, which several machines can share (a network mount). The password may also come from
/// `PGPASSWORD`, the blob folder from `GALLEY_BLOBS`.
package struct PostgresAddress: Sendable, Hashable {
    package var host: String
    package var port: Int
    package var user: String
    package var password: String?
    package var database: String
    /// The blob store: a folder's path, or `s3://BUCKET/PREFIX`.
    package var blobs: String
    /// How long any one answer of the database is waited for (`timeout=SECONDS`): a server
    /// that died or hangs mid-import ends the command with an error instead of never.
    package var timeout: Int = PostgresAddress.defaultTimeout
    /// Longer than any one statement Galley sends (an import's rows go in batches).
    package static let defaultTimeout = 120

    package init(_ text: String, environment: [String: String]) throws {
        let hint = "Write it as postgres://USER@HOST:PORT/DATABASE?blobs=/path/to/blobs (the password in PGPASSWORD)."
        guard case .postgres = StoreLocation(text), let parts = URLComponents(string: text), let host = parts.host, !host.isEmpty else {
            throw GalleyError("`\(Self.redacted(text))` is not a PostgreSQL address", id: .usage, hint: hint)
        }
        let database = String(parts.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw GalleyError("`\(Self.redacted(text))` names no database", id: .usage, hint: hint)
        }
        let query = parts.queryItems ?? []
        for item in query where !["blobs", "sslmode", "timeout"].contains(item.name) {
            throw GalleyError("`\(item.name)` is not an option of a PostgreSQL store address", id: .usage,
                              hint: "The address takes `blobs=FOLDER` and `timeout=SECONDS`; \(hint)")
        }
        if let text = query.first(where: { $0.name == "timeout" })?.value {
            guard let seconds = Int(text), (1...86_400).contains(seconds) else {
                throw GalleyError("timeout=\(text) is not a number of seconds from 1 to 86400", id: .usage,
                                  hint: "Write it as ?timeout=120: how long Galley waits for any one answer of the database.")
            }
            timeout = seconds
        }
        if let mode = query.first(where: { $0.name == "sslmode" })?.value, mode != "disable" {
            throw GalleyError("sslmode=\(mode): Galley does not speak TLS to PostgreSQL yet", id: .usage,
                              hint: "Reach the server over loopback, a private network or a TLS tunnel (stunnel, an SSH tunnel) with sslmode=disable.")
        }
        guard let blobs = query.first(where: { $0.name == "blobs" })?.value ?? environment["GALLEY_BLOBS"], !blobs.isEmpty else {
            throw GalleyError("a PostgreSQL store needs a blob folder for its files", id: .usage,
                              hint: "Add ?blobs=/path/to/blobs to the address (a folder every instance shares), or set GALLEY_BLOBS.")
        }
        self.host = host
        port = parts.port ?? 5432
        user = parts.user.flatMap { $0.removingPercentEncoding } ?? environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        password = parts.password.flatMap { $0.removingPercentEncoding } ?? environment["PGPASSWORD"]
        self.database = database.removingPercentEncoding ?? database
        self.blobs = blobs
    }

    /// The blob store the address names: a folder, or an S3 bucket (with this machine's folder
    /// for staging and cached copies under `$XDG_CACHE_HOME/galley`, else `~/.cache/galley`).
    func blobStore(environment: [String: String]) throws -> any BlobStore {
        guard S3Location.isAddress(blobs) else { return BlobFolder(root: URL(fileURLWithPath: blobs)) }
        let location = try S3Location(blobs, environment: environment)
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory()).appending(path: ".cache")
        let name = "s3-" + SHA256Hasher.hex(of: "\(location.endpoint.absoluteString)\u{1F}\(location.bucket)\u{1F}\(location.prefix)").prefix(16)
        let partSize = environment["GALLEY_S3_PART_SIZE"].flatMap { Int($0) } ?? (16 << 20)
        let cacheLimit = environment["GALLEY_BLOB_CACHE_MB"].flatMap { Int64($0) }.map { $0 << 20 } ?? (1 << 30)
        return S3Blobs(location, root: cache.appending(path: "galley").appending(path: String(name)), partSize: partSize,
                       cacheLimit: cacheLimit)
    }

    /// The address as messages show it: never the password.
    package var display: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// `text` with any password replaced by `***`, for messages about an address that did not parse.
    static func redacted(_ text: String) -> String { StoreLocation.redacted(text) }
}
