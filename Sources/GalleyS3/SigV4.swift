import Crypto
import Foundation

/// AWS Signature Version 4 for S3 requests. Hand-written (about forty lines over swift-crypto's
/// HMAC and SHA-256) because the Swift AWS SDKs are not in the package mirror; checked against
/// AWS's published example in the tests.
package enum SigV4 {
    /// The headers to send: `headers` plus `x-amz-date`, `x-amz-content-sha256`, the session
    /// token if any, and `Authorization`, which signs all of them and `host`.
    package static func sign(
        method: String, host: String, path: String, query: [(String, String)], headers: [(String, String)],
        payloadHash: String, region: String, accessKey: String, secretKey: String, sessionToken: String?, date: Date
    ) -> [(String, String)] {
        let (amzDate, day) = stamps(date)
        var all = headers + [("host", host), ("x-amz-content-sha256", payloadHash), ("x-amz-date", amzDate)]
        if let sessionToken { all.append(("x-amz-security-token", sessionToken)) }
        let canonicalHeaders = all.map { ($0.0.lowercased(), $0.1.trimmingCharacters(in: .whitespaces)) }.sorted { $0.0 < $1.0 }
        let signedHeaders = canonicalHeaders.map(\.0).joined(separator: ";")
        let encodedQuery: [(String, String)] = query.map { (encode($0.0), encode($0.1)) }
        let sortedQuery = encodedQuery.sorted { (a: (String, String), b: (String, String)) -> Bool in a.0 == b.0 ? a.1 < b.1 : a.0 < b.0 }
        let canonicalQuery = sortedQuery.map { (pair: (String, String)) -> String in pair.0 + "=" + pair.1 }.joined(separator: "&")
        let canonicalPath = encodePath(path)
        let canonicalRequest = [method, canonicalPath, canonicalQuery,
                                canonicalHeaders.map { "\($0.0):\($0.1)\n" }.joined(), signedHeaders, payloadHash].joined(separator: "\n")
        let scope = "\(day)/\(region)/s3/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, hex(SHA256.hash(data: Data(canonicalRequest.utf8)))].joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(secretKey)".utf8))
        for part in [day, region, "s3", "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        let authorization = "AWS4-HMAC-SHA256 Credential=\(accessKey)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        return all.filter { $0.0 != "host" } + [("Authorization", authorization)]
    }

    /// `yyyyMMdd'T'HHmmss'Z'` and `yyyyMMdd`, in UTC.
    package static func stamps(_ date: Date) -> (String, String) {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))"
        return ("\(day)T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z", day)
    }

    /// A path with each segment encoded (`/` kept), as SigV4 signs it and as it is sent.
    package static func encodePath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { encode(String($0)) }.joined(separator: "/")
    }

    /// RFC 3986 percent-encoding of everything but the unreserved characters, as SigV4 wants.
    package static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF")
                out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
            }
        }
        return out
    }

    package static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
