import Crypto
import Foundation
import GalleyCore

/// Signed feeds (docs/sync.md): `galley serve --signing-key` signs each feed answer with
/// Ed25519 (swift-crypto), and `galley sync --trust-key` refuses an answer that is unsigned or
/// signed by another key, and warns about one past its expiry. The signature travels in one
/// header, so the feed's JSON stays as it was and a 304 stays a 304:
///
///     Galley-Signature: keyid="<16 hex>", expires="<RFC 3339>", sig="<base64>"
///
/// It covers `galley-feed-v1`, the expiry and the JSON bytes (before any Content-Encoding),
/// each followed by a newline: the expiry cannot be stretched, nor the body changed, without
/// the key. The revision inside the body then guards against rollback, and the expiry against
/// a server frozen on old content (TUF's two threats).
public enum FeedSignature {
    public static let headerName = "Galley-Signature"

    /// The bytes the signature covers.
    static func message(expires: String, body: some Collection<UInt8>) -> Data {
        var message = Data("galley-feed-v1\n\(expires)\n".utf8)
        message.append(contentsOf: body)
        message.append(0x0A)
        return message
    }

    /// The header's parts.
    public struct Header: Sendable, Equatable {
        public var keyID: String
        public var expires: String
        public var signature: Data

        public var text: String {
            "keyid=\"\(keyID)\", expires=\"\(expires)\", sig=\"\(signature.base64EncodedString())\""
        }

        /// Reads `keyid="...", expires="...", sig="..."` (any order, no other keys).
        public init?(parsing text: String) {
            var fields: [String: String] = [:]
            for part in text.split(separator: ",") {
                let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, pair[1].count >= 2, pair[1].hasPrefix("\""), pair[1].hasSuffix("\""),
                      fields[pair[0]] == nil else { return nil }
                fields[pair[0]] = String(pair[1].dropFirst().dropLast())
            }
            guard fields.count == 3, let keyID = fields["keyid"], let expires = fields["expires"],
                  let sig = fields["sig"].flatMap({ Data(base64Encoded: $0) }), sig.count == 64 else { return nil }
            self.keyID = keyID
            self.expires = expires
            self.signature = sig
        }

        init(keyID: String, expires: String, signature: Data) {
            self.keyID = keyID
            self.expires = expires
            self.signature = signature
        }
    }

    /// The expiry an answer made at `now` carries: the end of the half-`ttl` period `now` falls
    /// in, plus half `ttl`. All answers of one period share it (so the server's kept answers
    /// and ETags hold for the period), and it is always between `ttl`/2 and `ttl` ahead.
    public static func expiry(at now: Date, ttl: TimeInterval) -> (period: Int64, expires: Date) {
        let half = max(ttl / 2, 1)
        let period = Int64((now.timeIntervalSince1970 / half).rounded(.down))
        return (period, Date(timeIntervalSince1970: Double(period + 2) * half))
    }

    static func rfc3339(_ date: Date) -> String { date.ISO8601Format(.iso8601.year().month().day().time(includingFractionalSeconds: false).timeZone(separator: .omitted)) }
}

/// Why a key file could not be used.
private func keyFileError(_ path: String, _ why: String, hint: String) -> GalleyError {
    GalleyError("\(path): \(why)", id: .inputUnreadable, path: path, hint: hint)
}

/// A key file: a first line naming what it holds, then the raw key in base64.
private enum KeyFile {
    static let privateTag = "galley-feed-signing-key ed25519"
    static let publicTag = "galley-feed-trust-key ed25519"

    static func read(_ path: String, tag: String) throws -> Data {
        guard FileManager.default.fileExists(atPath: path) else {
            throw GalleyError("no key file at \(path)", id: .inputNotFound, path: path,
                              hint: "Make a key pair with `galley keys generate`.")
        }
        guard let data = FileManager.default.contents(atPath: path), data.count < 4096,
              let text = String(data: data, encoding: .utf8) else {
            throw keyFileError(path, "cannot read it as a key file", hint: "Give a file `galley keys generate` wrote.")
        }
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if lines.first == (tag == privateTag ? publicTag : privateTag) {
            throw keyFileError(path, tag == privateTag ? "this is a public (trust) key; signing needs the private key"
                                                       : "this is a private (signing) key; give sync the public .pub file",
                               hint: "`galley keys generate` writes NAME.key (for serve) and NAME.pub (for sync).")
        }
        guard lines.count == 2, lines[0] == tag, let raw = Data(base64Encoded: lines[1]), raw.count == 32 else {
            throw keyFileError(path, "not a Galley \(tag == privateTag ? "signing" : "trust") key (a line `\(tag)`, then 32 bytes in base64)",
                               hint: "Make a key pair with `galley keys generate`.")
        }
        return raw
    }
}

/// The key a server signs its feed with.
public struct FeedSigningKey: Sendable {
    let key: Curve25519.Signing.PrivateKey

    public init() { key = Curve25519.Signing.PrivateKey() }

    public init(contentsOf path: String) throws {
        let raw = try KeyFile.read(path, tag: KeyFile.privateTag)
        do {
            key = try Curve25519.Signing.PrivateKey(rawRepresentation: raw)
        } catch {
            throw keyFileError(path, "not an Ed25519 private key", hint: "Make a key pair with `galley keys generate`.")
        }
    }

    public var trustKey: FeedTrustKey { FeedTrustKey(key: key.publicKey) }
    public var keyID: String { trustKey.keyID }

    /// The private key file's text (keep it secret), and the public one's.
    public var fileText: String { "\(KeyFile.privateTag)\n\(key.rawRepresentation.base64EncodedString())\n" }

    /// The header for `body` (the JSON bytes as sent without Content-Encoding), expiring at `expires`.
    public func header(for body: some Collection<UInt8>, expires: Date) -> String {
        let stamp = FeedSignature.rfc3339(expires)
        // Ed25519 signing cannot fail for a valid key; swift-crypto's API throws for other curves.
        let signature = (try? key.signature(for: FeedSignature.message(expires: stamp, body: body))) ?? Data()
        return FeedSignature.Header(keyID: keyID, expires: stamp, signature: signature).text
    }
}

/// The public key a client trusts a feed's signature with.
public struct FeedTrustKey: Sendable {
    let key: Curve25519.Signing.PublicKey

    init(key: Curve25519.Signing.PublicKey) { self.key = key }

    public init(contentsOf path: String) throws {
        let raw = try KeyFile.read(path, tag: KeyFile.publicTag)
        do {
            key = try Curve25519.Signing.PublicKey(rawRepresentation: raw)
        } catch {
            throw keyFileError(path, "not an Ed25519 public key", hint: "Give the .pub file `galley keys generate` wrote.")
        }
    }

    /// The first 16 hex digits of the SHA-256 of the raw public key: names the key in headers.
    public var keyID: String {
        SHA256.hash(data: key.rawRepresentation).map { String(format: "%02x", $0) }.joined().prefix(16).description
    }

    public var fileText: String { "\(KeyFile.publicTag)\n\(key.rawRepresentation.base64EncodedString())\n" }

    /// What a verified answer says of itself.
    public struct Verified: Sendable {
        public var keyID: String
        public var expires: Date
    }

    /// Checks `header` (nil: the answer was unsigned) against `body`; the error says what is
    /// wrong with it, as `feed.signature`.
    public func verify(header: String?, body: some Collection<UInt8>, address: String) throws -> Verified {
        func refused(_ why: String) -> GalleyError {
            GalleyError("the feed at \(address) \(why)", id: .feedSignature, path: address,
                        hint: "Nothing was changed. If the server's key was replaced, trust its new .pub file; otherwise the answer was not the server's.")
        }
        guard let header else { throw refused("is not signed (no \(FeedSignature.headerName) header), and --trust-key asks for a signature") }
        guard let parsed = FeedSignature.Header(parsing: header) else {
            throw refused("has a \(FeedSignature.headerName) header that is not keyid=\"...\", expires=\"...\", sig=\"...\"")
        }
        guard parsed.keyID == keyID else { throw refused("is signed by key \(parsed.keyID), not by the trusted key \(keyID)") }
        guard let expires = try? Date(parsed.expires, strategy: .iso8601) else {
            throw refused("has a signature whose expiry `\(parsed.expires)` is not an RFC 3339 time")
        }
        guard key.isValidSignature(parsed.signature, for: FeedSignature.message(expires: parsed.expires, body: body)) else {
            throw refused("has a signature that does not match its content: changed on the way, or not signed by the trusted key")
        }
        return Verified(keyID: parsed.keyID, expires: expires)
    }
}

/// `galley keys generate`: a new key pair as two files, `NAME.key` (private, mode 0600, for
/// `serve --signing-key`) and `NAME.pub` (for `sync --trust-key`).
public struct GeneratedKeys: Sendable, Encodable {
    public var privateKey: String
    public var publicKey: String
    public var keyID: String

    enum CodingKeys: String, CodingKey {
        case privateKey = "private_key"
        case publicKey = "public_key"
        case keyID = "key_id"
    }

    /// Writes a new pair into `folder` (made if missing); existing files are replaced only with `force`.
    public static func generate(in folder: URL, name: String, force: Bool) throws -> GeneratedKeys {
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else {
            throw GalleyError("`\(name)` is not a file name", id: .usage, hint: "Give a name such as feed (writes feed.key and feed.pub).")
        }
        let privateURL = folder.appending(path: "\(name).key")
        let publicURL = folder.appending(path: "\(name).pub")
        if !force {
            for url in [privateURL, publicURL] where FileManager.default.fileExists(atPath: url.path) {
                throw GalleyError("the key file already exists", id: .outputExists, path: url.path,
                                  hint: "Pass --force to replace the pair (clients trusting the old .pub then refuse the feed), or choose another --name.")
            }
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw GalleyError("cannot make the folder: \(error.localizedDescription)", id: .outputUnwritable, path: folder.path)
        }
        let key = FeedSigningKey()
        try AtomicFile.write(key.fileText, to: privateURL, replace: force, permissions: 0o600)
        try AtomicFile.write(key.trustKey.fileText, to: publicURL, replace: force)
        return GeneratedKeys(privateKey: privateURL.path, publicKey: publicURL.path, keyID: key.keyID)
    }
}
