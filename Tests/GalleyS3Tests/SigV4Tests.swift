import Foundation
import Testing
@testable import GalleyCore
@testable import GalleyS3

/// AWS Signature V4 as Galley signs S3 requests, against the examples AWS publishes in its
/// documentation ("Signature Calculations for the Authorization Header: Transferring Payload in a
/// Single Chunk"), beside the test server (SeaweedFS), which refuses a wrong signature.
@Suite struct S3SignatureTests {
    static let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    static let date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z
    static let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    func authorization(_ method: String, _ path: String, query: [(String, String)] = [], headers: [(String, String)] = [],
                       payload: String = S3SignatureTests.empty) -> String? {
        SigV4.sign(method: method, host: "examplebucket.s3.amazonaws.com", path: path, query: query, headers: headers,
                   payloadHash: payload, region: "us-east-1", accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: Self.secret,
                   sessionToken: nil, date: Self.date).first { $0.0 == "Authorization" }?.1
    }

    @Test func aGetWithARangeMatchesTheDocumentedSignature() {
        #expect(authorization("GET", "/test.txt", headers: [("Range", "bytes=0-9")]) == """
            AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
            SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
            Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41
            """)
    }

    @Test func aPutWhoseKeyNeedsEncodingMatchesTheDocumentedSignature() {
        let body = SHA256Hasher.hex(of: "Welcome to Amazon S3.")
        let signed = authorization("PUT", "/test$file.text", headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"),
                                                                      ("x-amz-storage-class", "REDUCED_REDUNDANCY")], payload: body)
        #expect(signed?.hasSuffix("Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd") == true, "\(signed ?? "")")
    }

    @Test func aQueryWithoutAValueMatchesTheDocumentedSignature() {
        let signed = authorization("GET", "/", query: [("lifecycle", "")])
        #expect(signed?.hasSuffix("Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543") == true, "\(signed ?? "")")
    }

    @Test func addressesWithoutCredentialsOrBucketAreRefusedWithAHint() {
        #expect(throws: GalleyError.self) { try S3Location("s3://bucket/prefix", environment: [:]) }
        #expect(throws: GalleyError.self) { try S3Location("s3:///prefix", environment: ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"]) }
        let location = try? S3Location("s3://bucket/some/prefix/", environment: ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"])
        #expect(location?.key("feed.json") == "some/prefix/feed.json")
        #expect(location?.hostAndPath("k").host == "bucket.s3.us-east-1.amazonaws.com")
    }
}
