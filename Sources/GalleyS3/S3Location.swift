import Foundation
import GalleyCore

/// A place on S3-compatible object storage: `s3://BUCKET[/PREFIX]` (the shared store's blobs,
/// `galley publish`'s site), with the endpoint,
/// region and credentials from the usual AWS environment variables (`AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` or `AWS_DEFAULT_REGION`, and
/// `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` for another service than AWS, addressed
/// path-style: MinIO, Ceph, SeaweedFS).
package struct S3Location: Sendable, Hashable {
    package var bucket: String
    /// Without leading or trailing slashes; may be empty.
    package var prefix: String
    /// `scheme://host[:port]` of the service.
    package var endpoint: URL
    /// Path-style (`/BUCKET/KEY` on the endpoint) for custom endpoints; virtual-hosted
    /// (`BUCKET.s3.REGION.amazonaws.com/KEY`) on AWS.
    package var pathStyle: Bool
    package var region: String
    package var accessKey: String
    package var secretKey: String
    package var sessionToken: String?

    package static func isAddress(_ text: String) -> Bool { text.hasPrefix("s3://") }

    package init(_ text: String, environment: [String: String]) throws {
        let hint = "Write it as s3://BUCKET/PREFIX, with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_REGION set "
            + "(and AWS_ENDPOINT_URL for a service other than AWS)."
        guard Self.isAddress(text), let parts = URLComponents(string: text), let bucket = parts.host, !bucket.isEmpty,
              parts.query == nil, parts.user == nil else {
            throw GalleyError("`\(text)` is not an S3 address", id: .usage, hint: hint)
        }
        self.bucket = bucket
        prefix = parts.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        region = environment["AWS_REGION"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        guard let access = environment["AWS_ACCESS_KEY_ID"], !access.isEmpty,
              let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else {
            throw GalleyError("S3 needs credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set", id: .usage,
                              path: text, hint: hint)
        }
        accessKey = access
        secretKey = secret
        sessionToken = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        if let custom = environment["AWS_ENDPOINT_URL_S3"] ?? environment["AWS_ENDPOINT_URL"], !custom.isEmpty {
            guard let url = URL(string: custom), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw GalleyError("AWS_ENDPOINT_URL `\(custom)` is not an http or https address", id: .usage, hint: hint)
            }
            endpoint = url
            pathStyle = true
        } else {
            guard let url = URL(string: "https://s3.\(region).amazonaws.com"), url.host != nil else {
                throw GalleyError("AWS_REGION `\(region)` is not a region name", id: .usage, hint: hint)
            }
            endpoint = url
            pathStyle = false
        }
    }

    package var display: String { "s3://\(bucket)" + (prefix.isEmpty ? "" : "/\(prefix)") }

    /// The object key of `relative` (a path under the prefix).
    package func key(_ relative: String) -> String {
        prefix.isEmpty ? relative : prefix + "/" + relative
    }

    /// The Host header and the path (`/KEY`, or `/BUCKET/KEY` path-style) of an object.
    package func hostAndPath(_ key: String) -> (host: String, path: String) {
        let port = endpoint.port.map { ":\($0)" } ?? ""
        if pathStyle {
            return ((endpoint.host ?? "") + port, "/" + bucket + (key.isEmpty ? "" : "/" + key))
        }
        return ("\(bucket).s3.\(region).amazonaws.com" + port, "/" + key)
    }
}
