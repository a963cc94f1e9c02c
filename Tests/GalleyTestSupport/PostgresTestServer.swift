import Foundation

/// The PostgreSQL server the tests of the PostgreSQL store run against: the throwaway cluster
/// `scripts/pg-test-server.sh run -- swift test` starts (its address in `GALLEY_TEST_POSTGRES`).
/// `make test` sets `GALLEY_REQUIRE_POSTGRES=1` too, so those tests fail rather than go missing
/// when no server is there; a bare `swift test` without a server runs the SQLite cases only.
public enum PostgresTestServer {
    public static var address: String? {
        ProcessInfo.processInfo.environment["GALLEY_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether the PostgreSQL cases run (a server is given, or one is required).
    public static var enabled: Bool {
        address != nil || ProcessInfo.processInfo.environment["GALLEY_REQUIRE_POSTGRES"] == "1"
    }

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    private static let counter = Counter()

    /// A name no other test of this run uses (databases, buckets).
    public static func uniqueName(_ prefix: String) -> String { "\(prefix)-\(getpid())-\(counter.next())" }

    /// The environment of a store whose blobs are on the S3 test server: its endpoint, its
    /// test credentials, a cache folder of its own and 5 MiB parts (so multipart uploads run).
    public static func s3Environment() throws -> [String: String] {
        guard let s3 else {
            throw Unavailable(description: "GALLEY_TEST_S3 is not set: run `make test`, or `scripts/s3-test-server.sh run -- swift test`")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ENDPOINT_URL"] = s3
        environment["AWS_ACCESS_KEY_ID"] = "testing"
        environment["AWS_SECRET_ACCESS_KEY"] = "testing"
        environment["AWS_REGION"] = "us-east-1"
        environment["XDG_CACHE_HOME"] = Scratch.path("galley-cache").path
        environment["GALLEY_S3_PART_SIZE"] = String(5 << 20)
        return environment
    }

    /// The S3 test server (scripts/s3-test-server.sh), if the tests run with one.
    public static var s3: String? {
        ProcessInfo.processInfo.environment["GALLEY_TEST_S3"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A new, empty database on the test server with a blob folder of its own (or the blob
    /// store `blobs` names): the address of a PostgreSQL store (`postgres://…/DB?blobs=…`) that
    /// no other test touches.
    public static func newStore(blobs: String? = nil) throws -> String {
        guard let address, var parts = URLComponents(string: address) else {
            throw Unavailable(description: "GALLEY_TEST_POSTGRES is not set: run `make test`, or `scripts/pg-test-server.sh run -- swift test`")
        }
        let name = "galley_test_\(getpid())_\(counter.next())"
        try psql(address, "CREATE DATABASE \(name)")
        parts.path = "/\(name)"
        parts.queryItems = [URLQueryItem(name: "blobs", value: blobs ?? Scratch.path("galley-blobs").path)]
        guard let store = parts.string else { throw Unavailable(description: "cannot make an address from \(address)") }
        return store
    }

    /// Runs one SQL command through psql (Debian's postgresql-client) on the server at `address`.
    public static func psql(_ address: String, _ sql: String) throws {
        _ = try runPSQL(address, sql, options: "-qc")
    }

    /// The one value `sql` answers in the database of the store at `store` (its address without
    /// the store's own options, which psql does not know).
    public static func psqlValue(store: String, _ sql: String) throws -> String {
        guard var parts = URLComponents(string: store) else { throw Unavailable(description: "not an address: \(store)") }
        parts.query = nil
        return try runPSQL(parts.string ?? store, sql, options: "-qtAc").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// psql's output for `sql` (one command: its output and messages are small, so reading one
    /// pipe after the other cannot block).
    private static func runPSQL(_ address: String, _ sql: String, options: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", address, "-v", "ON_ERROR_STOP=1", options, sql]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let value = output.fileHandleForReading.readDataToEndOfFile()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Unavailable(description: "psql failed on `\(sql)`: \(String(decoding: message, as: UTF8.self))")
        }
        return String(decoding: value, as: UTF8.self)
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func next() -> Int {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            return value
        }
    }
}
