import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyPublish
@testable import GalleyS3
@testable import GalleyStore
@testable import GalleyStoreSQLite

/// A folder store holding the fixture `example-valid.zip`, and later its edited version.
struct PublishedStore {
    static let zips = TestFiles.fixtures.appending(path: "zips")
    let store: SQLiteStore

    init() throws {
        store = try SQLiteStore(at: Scratch.folder("galley-publish-store").appending(path: "store"))
        _ = try store.importZip(Self.zips.appending(path: "example-valid.zip").path, force: false)
    }

    func correct() throws {
        _ = try store.importZip(TestFiles.fixtures.appending(path: "versions/edited/example-valid.zip").path, force: true)
    }
}

@Suite struct SiteWriterTests {
    /// The manifest is a file anyone can edit: a path in it that leaves the site is never
    /// removed, and the publish goes on.
    @Test func aManifestPathOutsideTheSiteIsLeftAlone() throws {
        let work = try Scratch.folder("galley-publish-folder")
        let site = work.appending(path: "site")
        let outside = work.appending(path: "outside.txt")
        try Data("keep".utf8).write(to: outside)
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        try Data(#"{"files": {"../outside.txt": "00", "/etc/hostname": "00", "a//b": "00"}}"#.utf8)
            .write(to: site.appending(path: Publisher.manifestName))
        let report = try Publisher(store: try PublishedStore().store, options: PublishOptions(destination: .folder(site))).publish()
        #expect(report.removed == 0)
        #expect(FileManager.default.fileExists(atPath: outside.path))
        for path in ["../x", "/x", "a/./b", "a//b", ""] {
            #expect(throws: GalleyError.self) { try SiteWriter.checked(path) }
        }
        #expect(try SiteWriter.checked("issues/x/files/ab/cover.jpg") == "issues/x/files/ab/cover.jpg")
    }

    @Test func aDestinationIsABucketOnlyByItsSchemeAndNeedsCredentials() throws {
        let credentials = ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"]
        #expect(try PublishDestination.parse("s3://b/p", environment: credentials) == .bucket("s3://b/p", environment: credentials))
        #expect(try PublishDestination.parse("build/s3:", environment: [:]) == .folder(URL(fileURLWithPath: "build/s3:")))
        let error = try #require(throws: GalleyError.self) { try PublishDestination.parse("s3://b/p", environment: [:]) }
        #expect(error.id == .usage && error.message.contains("AWS_ACCESS_KEY_ID"))
    }
}

/// `galley publish` into a bucket of the S3 test server (SeaweedFS, scripts/s3-test-server.sh).
@Suite(.enabled(if: PostgresTestServer.s3 != nil || PostgresTestServer.enabled, "needs GALLEY_TEST_S3 (make test starts a server)"))
struct BucketPublishTests {
    struct Bucket {
        let client: S3Client
        let address: String
        let environment: [String: String]

        init() throws {
            environment = try PostgresTestServer.s3Environment()
            let name = PostgresTestServer.uniqueName("galley-site")
            address = "s3://\(name)/news/site"
            client = S3Client(try S3Location(address, environment: environment))
            try client.createBucket()
        }

        func publish(_ store: SQLiteStore) throws -> PublishReport {
            try Publisher(store: store, options: PublishOptions(destination: .bucket(address, environment: environment))).publish()
        }

        func head(_ path: String) throws -> S3Client.Answer { try client.send(.HEAD, key: client.location.key(path)) }

        func manifest() throws -> [String: String] {
            let answer = try client.send(.GET, key: client.location.key(Publisher.manifestName))
            let data = Data(try #require(answer.body).readableBytesView)
            return try JSONDecoder().decode(Publisher.Manifest.self, from: data).files
        }

        /// What the bucket holds under the prefix, by path.
        func objects() throws -> Set<String> { Set(try client.list().map(\.path)) }
    }

    /// Each object carries the media type and `Cache-Control` a CDN needs; the bucket holds
    /// exactly the manifest's files; a second publish sends nothing.
    @Test func objectsCarryTheirTypeAndCacheLifetime() throws {
        let bucket = try Bucket()
        let published = try PublishedStore()
        let first = try bucket.publish(published.store)
        #expect(first.issues == 1 && first.written > 5 && first.removed == 0, "\(first)")
        #expect(first.to == bucket.address)
        let manifest = try bucket.manifest()
        #expect(try bucket.objects() == Set(manifest.keys).union([Publisher.manifestName]))

        let feed = try bucket.head("feed.json")
        #expect(feed.headers.first(name: "content-type") == "application/json;charset=UTF-8")
        #expect(feed.headers.first(name: "cache-control") == "public, max-age=0, s-maxage=10, stale-while-revalidate=60")
        let zip = try #require(manifest.keys.first { $0.hasPrefix("packages/example-valid/") && $0.hasSuffix(".zip") })
        #expect(try bucket.head(zip).headers.first(name: "content-type") == "application/zip")
        #expect(try bucket.head(zip).headers.first(name: "cache-control") == "public, max-age=31536000, immutable")
        let image = try #require(manifest.keys.first { $0.contains("/files/") && $0.hasSuffix(".jpg") })
        #expect(try bucket.head(image).headers.first(name: "content-type") == "image/jpeg")
        #expect(try bucket.head(image).headers.first(name: "cache-control") == "public, max-age=31536000, immutable")

        let again = try bucket.publish(published.store)
        #expect(again.written == 0 && again.removed == 0 && again.unchanged == first.written, "\(again)")
    }

    /// A corrected issue: its new zip goes up, the old one is removed, and at every step the
    /// feed names only objects that are there.
    @Test func aCorrectionReplacesTheZipAndRemovesTheOldOne() throws {
        let bucket = try Bucket()
        let published = try PublishedStore()
        _ = try bucket.publish(published.store)
        let oldZips = try bucket.objects().filter { $0.hasPrefix("packages/example-valid/") }
        try published.correct()
        let second = try bucket.publish(published.store)
        #expect(second.written >= 3 && second.removed >= 1, "\(second)")
        let objects = try bucket.objects()
        let newZips = objects.filter { $0.hasPrefix("packages/example-valid/") }
        #expect(newZips.count == 1 && newZips.isDisjoint(with: oldZips), "\(oldZips) -> \(newZips)")
        #expect(objects == Set(try bucket.manifest().keys).union([Publisher.manifestName]))
    }

    /// A bucket that is not there: a failure in words, nothing claimed written.
    @Test func aMissingBucketIsRefusedInWords() throws {
        let environment = try PostgresTestServer.s3Environment()
        let options = PublishOptions(destination: .bucket("s3://no-such-site-\(getpid())/p", environment: environment))
        let error = try #require(throws: GalleyError.self) { try Publisher(store: try PublishedStore().store, options: options).publish() }
        #expect(error.id == .outputUnwritable)
        #expect(error.message.contains("NoSuchBucket") || error.message.contains("404"), "\(error.message)")
    }
}
