import Foundation
import Testing
@testable import GalleyCore
@testable import GalleySigning

/// Signed feeds without a server: what serve signs, sync verifies, and nothing else.
@Suite struct FeedSigningTests {
    let body = Array(#"{"revision": 7, "packages": []}"#.utf8)
    let expires = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aSignedBodyVerifiesWithItsOwnTrustKey() throws {
        let key = FeedSigningKey()
        let header = key.header(for: body, expires: expires)
        let verified = try key.trustKey.verify(header: header, body: body, address: "http://127.0.0.1/feed")
        #expect(verified.keyID == key.keyID)
        #expect(verified.expires == expires)
    }

    @Test func aChangedByteAnotherKeyAMissingOrForgedHeaderAreRefused() throws {
        let key = FeedSigningKey()
        let header = key.header(for: body, expires: expires)
        var changed = body
        changed[3] ^= 0x01
        let other = FeedSigningKey().trustKey
        let refusals: [(String?, [UInt8], FeedTrustKey, String)] = [
            (header, changed, key.trustKey, "does not match its content"),
            (header, body, other, "is signed by key"),
            (nil, body, key.trustKey, "is not signed"),
            ("keyid=\"x\"", body, key.trustKey, "is not keyid="),
            (header.replacingOccurrences(of: "expires=\"", with: "expires=\"x"), body, key.trustKey, "expiry"),
        ]
        for (header, body, trust, words) in refusals {
            #expect(throws: GalleyError.self) { try trust.verify(header: header, body: body, address: "a") }
            do {
                _ = try trust.verify(header: header, body: body, address: "a")
            } catch let error as GalleyError {
                #expect(error.id == .feedSignature)
                #expect(error.message.contains(words), "\(error.message)")
            }
        }
    }

    @Test func theHeaderRoundTripsAndRejectsUnknownParts() throws {
        let header = FeedSigningKey().header(for: body, expires: expires)
        let parsed = try #require(FeedSignature.Header(parsing: header))
        #expect(parsed.text == header)
        #expect(FeedSignature.Header(parsing: header + ", extra=\"1\"") == nil)
        #expect(FeedSignature.Header(parsing: "") == nil)
    }

    /// Every answer of one period shares its expiry, always between half the lifetime and the
    /// whole of it ahead.
    @Test func expiriesAreSharedPerPeriodAndWithinTheLifetime() {
        let ttl: TimeInterval = 600
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1_000 {
            let now = Date(timeIntervalSince1970: Double(UInt32.random(in: 0...UInt32.max, using: &generator)))
            let (period, expires) = FeedSignature.expiry(at: now, ttl: ttl)
            let ahead = expires.timeIntervalSince(now)
            #expect(ahead > ttl / 2 - 1 && ahead <= ttl, "\(ahead)")
            #expect(FeedSignature.expiry(at: now.addingTimeInterval(0.001), ttl: ttl).period >= period)
        }
    }

    @Test func keyFilesRoundTripAndAreNotMistakenForEachOther() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "galley-signing-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = try GeneratedKeys.generate(in: folder, name: "feed", force: false)
        let signing = try FeedSigningKey(contentsOf: keys.privateKey)
        let trust = try FeedTrustKey(contentsOf: keys.publicKey)
        #expect(signing.keyID == trust.keyID && trust.keyID == keys.keyID)
        #expect(throws: GalleyError.self) { try FeedSigningKey(contentsOf: keys.publicKey) }
        #expect(throws: GalleyError.self) { try FeedTrustKey(contentsOf: keys.privateKey) }
        #expect(throws: GalleyError.self) { try GeneratedKeys.generate(in: folder, name: "feed", force: false) }
        let mode = try FileManager.default.attributesOfItem(atPath: keys.privateKey)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
