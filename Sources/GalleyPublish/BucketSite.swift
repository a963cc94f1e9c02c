import Foundation
import GalleyCore
import GalleyS3

/// A site in a bucket (`s3://BUCKET/PREFIX`): each file one object with its media type and
/// `Cache-Control`, so a CDN in front of the bucket caches content-addressed objects for good
/// and the JSON briefly. What the bucket holds is listed once, at the start (a request per
/// thousand objects), instead of a HEAD per file. S3 replaces an object whole on PUT, so a
/// reader gets the old bytes or the new ones.
final class BucketSite: SiteTarget {
    let client: S3Client
    /// Path under the prefix: size, from the listing and kept up to date by this publish.
    private var present: [String: Int64] = [:]

    init(_ address: String, environment: [String: String]) throws {
        client = S3Client(try S3Location(address, environment: environment), failureID: .outputUnwritable)
    }

    var display: String { client.location.display }

    func prepare() throws {
        present = Dictionary(try client.list().map { ($0.path, $0.size) }, uniquingKeysWith: { first, _ in first })
    }

    func size(_ path: String) throws -> Int64? { present[path] }

    func read(_ path: String) throws -> Data? {
        guard present[path] != nil else { return nil }
        let answer = try client.send(.GET, key: client.location.key(path))
        guard answer.status == .ok, let body = answer.body else { return nil }
        return Data(body.readableBytesView)
    }

    func write(_ data: Data, at path: String, headers: SiteHeaders) throws {
        try client.put(data, key: client.location.key(path), headers: .init(contentType: headers.type, cacheControl: headers.cacheControl))
        present[path] = Int64(data.count)
    }

    func copy(_ source: String, sha256: String, at path: String, headers: SiteHeaders) throws {
        try client.put(file: source, sha256: sha256, key: client.location.key(path),
                       headers: .init(contentType: headers.type, cacheControl: headers.cacheControl))
        present[path] = FileStatus(source)?.size ?? 0
    }

    func remove(_ path: String) -> Bool {
        guard (try? client.delete(client.location.key(path))) != nil else { return false }
        present[path] = nil
        return true
    }
}
