import Foundation
import GalleyTestSupport
import Testing
@testable import GalleyCore
@testable import GalleyStore
@testable import GalleyS3
@testable import GalleyStorePostgres

/// The blob store on S3 against SeaweedFS's S3 server (scripts/s3-test-server.sh): what the
/// conformance suite does not reach on its own.
@Suite(.enabled(if: PostgresTestServer.enabled, "needs GALLEY_TEST_S3 (make test starts a server)"))
struct S3BlobsTests {
    func blobs() throws -> S3Blobs {
        let environment = try PostgresTestServer.s3Environment()
        let bucket = PostgresTestServer.uniqueName("galley-blobs")
        let blobs = S3Blobs(try S3Location("s3://\(bucket)/p", environment: environment), root: Scratch.path("galley-s3"),
                            partSize: 5 << 20, cacheLimit: 16 << 20)
        try blobs.createFolders()
        try blobs.createBucket()
        return blobs
    }

    func randomFile(_ bytes: Int) throws -> (url: URL, sha256: String) {
        let url = Scratch.path("galley-random")
        var generator = SystemRandomNumberGenerator()
        let data = Data((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try data.write(to: url)
        return (url, try FileDigest.of(url.path).sha256)
    }

    /// A file of several parts goes up as a multipart upload, comes back whole (checked against
    /// its SHA-256), and placing the same bytes again sends nothing.
    @Test func aLargeBlobGoesUpInPartsAndComesBackWhole() throws {
        let blobs = try blobs()
        let size = (12 << 20) + 12_345
        let file = try randomFile(size)
        let copy = Scratch.path("galley-random-copy")
        try FileManager.default.copyItem(at: file.url, to: copy)
        #expect(try blobs.place(file.url, sha256: file.sha256, size: Int64(size)))
        #expect(!FileManager.default.fileExists(atPath: file.url.path), "the staged file is consumed")
        #expect(try blobs.size(file.sha256) == Int64(size))
        #expect(try !blobs.place(copy, sha256: file.sha256, size: Int64(size)), "already there: nothing is sent")
        #expect(try blobs.all() == [file.sha256])
        let local = try blobs.localFile(file.sha256, size: Int64(size))
        #expect(try FileDigest.of(local.path).sha256 == file.sha256)
        #expect(blobs.verify(file.sha256, size: Int64(size)) == nil)
        #expect(blobs.verify(file.sha256, size: 1) == "\(size) bytes, recorded 1")
        blobs.remove(file.sha256)
        #expect(blobs.verify(file.sha256, size: Int64(size)) == "missing")
        #expect(throws: GalleyError.self) { try blobs.localFile(file.sha256, size: Int64(size)) }
    }

    /// The local cache keeps the most recently used blobs within its limit.
    @Test func theCacheKeepsTheMostRecentlyUsedWithinItsLimit() throws {
        let blobs = try blobs()
        var shas: [String] = []
        for _ in 0..<3 {
            let file = try randomFile(7 << 20)
            _ = try blobs.place(file.url, sha256: file.sha256, size: 7 << 20)
            shas.append(file.sha256)
        }
        for sha in shas { _ = try blobs.localFile(sha, size: 7 << 20) }
        let cached = shas.filter { FileManager.default.fileExists(atPath: S3Blobs.fanOut(blobs.cache, $0).path) }
        #expect(cached == Array(shas.suffix(2)), "16 MiB hold the last two 7 MiB blobs")
    }

    /// A blob goes up with the media type of its bytes: a JPEG as one, a zip as one, anything
    /// else as bytes.
    @Test func blobsCarryTheMediaTypeOfTheirBytes() throws {
        let blobs = try blobs()
        let client = S3Client(blobs.location)
        let zip = TestFiles.fixtures.appending(path: "zips/example-valid.zip")
        let jpeg = TestFiles.example.appending(path: "cover.jpg")
        let other = try randomFile(100)
        for (source, type) in [(zip, "application/zip"), (jpeg, "image/jpeg"), (other.url, "application/octet-stream")] {
            let staged = Scratch.path("galley-staged")
            try FileManager.default.copyItem(at: source, to: staged)
            let digest = try FileDigest.of(staged.path)
            _ = try blobs.place(staged, sha256: digest.sha256, size: digest.size)
            let answer = try client.send(.HEAD, key: blobs.key(digest.sha256))
            #expect(answer.headers.first(name: "content-type") == type, "\(source.lastPathComponent)")
        }
    }

    /// A bucket that does not exist is an error that says so, not a crash.
    @Test func aMissingBucketIsAClearError() throws {
        let environment = try PostgresTestServer.s3Environment()
        let blobs = S3Blobs(try S3Location("s3://no-such-bucket-\(getpid())", environment: environment), root: Scratch.path("galley-s3"))
        try expectRefused(blobs, saying: ["HTTP 404", "NoSuchBucket"])
    }

    /// Places a small blob with `blobs`, which must fail with an error naming one of `reasons`;
    /// returns the blob's digest.
    @discardableResult
    func expectRefused(_ blobs: S3Blobs, saying reasons: [String]) throws -> String {
        let file = try randomFile(10)
        do {
            _ = try blobs.place(file.url, sha256: file.sha256, size: 10)
            Issue.record("the upload was taken")
        } catch let error as GalleyError {
            #expect(reasons.contains { error.message.contains($0) }, "\(error.message)")
        }
        return file.sha256
    }

    /// The server checks signatures: a wrong secret is refused with an error that says so, and
    /// nothing is stored.
    @Test func aWrongSecretIsRefused() throws {
        var environment = try PostgresTestServer.s3Environment()
        let bucket = PostgresTestServer.uniqueName("galley-secret")
        let right = S3Blobs(try S3Location("s3://\(bucket)/p", environment: environment), root: Scratch.path("galley-s3"))
        try right.createBucket()
        environment["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let wrong = S3Blobs(try S3Location("s3://\(bucket)/p", environment: environment), root: Scratch.path("galley-s3"))
        let sha = try expectRefused(wrong, saying: ["403", "SignatureDoesNotMatch"])
        #expect(throws: GalleyError.self) { _ = try right.localFile(sha, size: 10) }
    }
}
