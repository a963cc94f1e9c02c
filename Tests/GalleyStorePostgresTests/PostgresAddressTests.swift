import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyStore
@testable import GalleyStorePostgres

/// `--store postgres://…` as users write it, and what they are told when it is wrong: never a
/// crash, never the password in a message.
@Suite struct PostgresAddressTests {
    func address(_ text: String, _ environment: [String: String] = [:]) throws -> PostgresAddress {
        try PostgresAddress(text, environment: environment)
    }

    @Test func anAddressGivesItsPartsAndShowsNoPassword() throws {
        let parsed = try address("postgres://galley:s3cret@db.internal:6543/news?blobs=/srv/blobs")
        #expect(parsed.host == "db.internal" && parsed.port == 6543 && parsed.user == "galley" && parsed.database == "news")
        #expect(parsed.password == "s3cret" && parsed.blobs == "/srv/blobs")
        #expect(parsed.display == "postgres://galley@db.internal:6543/news")
        #expect(StoreLocation("postgres://galley:s3cret@db/news?blobs=/b").display.contains("s3cret") == false)
        let fromEnvironment = try address("postgresql://galley@db/news", ["PGPASSWORD": "p", "GALLEY_BLOBS": "/b"])
        #expect(fromEnvironment.port == 5432 && fromEnvironment.password == "p" && fromEnvironment.blobs == "/b")
    }

    @Test(arguments: [
        ("postgres://galley:s3cret@db/", "names no database"),
        ("postgres://galley:s3cret@db/news", "needs a blob folder"),
        ("postgres://galley:s3cret@db/news?blobs=/b&pool=9", "is not an option"),
        ("postgres://galley:s3cret@db/news?blobs=/b&sslmode=require", "does not speak TLS"),
        ("postgres:///news?blobs=/b", "is not a PostgreSQL address"),
    ])
    func aWrongAddressIsAUsageErrorThatSaysWhatIsWrong(text: String, says: String) throws {
        do {
            _ = try address(text)
            Issue.record("`\(text)` was taken")
        } catch let error as GalleyError {
            #expect(error.id == .usage && error.message.contains(says), "\(error.message)")
            #expect(!error.message.contains("s3cret") && error.hint != nil)
        }
    }

    /// A server that is not there: `store.failed`, naming the host and port, with a hint.
    @Test func anUnreachableServerIsAStoreFailureNamingWhere() throws {
        let url = try #require(URL(string: "postgres://galley:s3cret@127.0.0.1:1/news?blobs=\(Scratch.path("galley-blobs").path)"))
        do {
            _ = try PostgresStore(url.absoluteString, access: .read, environment: ProcessInfo.processInfo.environment)
            Issue.record("a store opened on port 1")
        } catch let error as GalleyError {
            #expect(error.id == .storeFailed && error.message.contains("127.0.0.1:1"), "\(error.message)")
            #expect(!error.message.contains("s3cret") && error.path?.contains("s3cret") == false)
            #expect(error.hint?.contains("pg_isready") == true)
        }
    }
}
