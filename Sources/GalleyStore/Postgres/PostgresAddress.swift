import Foundation
import GalleyCore

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
    package var blobs: URL

    /// Whether `text` names a PostgreSQL store rather than a folder.
    package static func isAddress(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    package init(_ url: URL, environment: [String: String]) throws {
        let text = url.absoluteString
        let hint = "Write it as postgres://USER@HOST:PORT/DATABASE?blobs=/path/to/blobs (the password in PGPASSWORD)."
        guard Self.isAddress(text), let parts = URLComponents(string: text), let host = parts.host, !host.isEmpty else {
            throw GalleyError("`\(Self.redacted(text))` is not a PostgreSQL address", id: .usage, hint: hint)
        }
        let database = String(parts.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw GalleyError("`\(Self.redacted(text))` names no database", id: .usage, hint: hint)
        }
        let query = parts.queryItems ?? []
        for item in query where !["blobs", "sslmode"].contains(item.name) {
            throw GalleyError("`\(item.name)` is not an option of a PostgreSQL store address", id: .usage,
                              hint: "The address takes `blobs=FOLDER`; \(hint)")
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
        self.blobs = URL(fileURLWithPath: blobs)
    }

    /// The address as messages show it: never the password.
    package var display: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// `text` with any password replaced by `***`, for messages about an address that did not parse.
    static func redacted(_ text: String) -> String {
        guard var parts = URLComponents(string: text), parts.password != nil else { return text }
        parts.password = "***"
        return parts.string ?? text
    }
}
