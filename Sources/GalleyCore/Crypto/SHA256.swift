internal import Crypto

/// Incremental SHA-256 (the only file that computes one).
///
/// Over swift-crypto, which is BoringSSL on Linux (SHA-NI and AVX2 code, as fast as OpenSSL's)
/// and is in the binary already for the feed's Ed25519 signatures. OpenSSL's libcrypto, which
/// this wrapped before, was a second crypto library loaded by every command for this one
/// function: 3.4 MB of an import's resident memory, and its relocations at every start.
public final class SHA256Hasher {
    private var hash = Crypto.SHA256()

    public init() {}

    public func update(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        hash.update(bufferPointer: buffer)
    }

    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest. The hasher cannot be used afterwards.
    package func finalize() -> SHA256Digest {
        SHA256Digest(hash.finalize())
    }

    /// The digest as 64 lowercase hex digits. The hasher cannot be used afterwards.
    public func finalizeHex() -> String {
        hexString(hash.finalize())
    }

    /// SHA-256 of `text`'s UTF-8 bytes as hex.
    public static func hex(of text: String) -> String {
        let hasher = SHA256Hasher()
        hasher.update(Array(text.utf8))
        return hasher.finalizeHex()
    }
}

/// `bytes` as lowercase hex, two digits a byte.
package func hexString<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
    Array(bytes).withUnsafeBytes { hexString(raw: $0) }
}

/// `bytes` as lowercase hex, written straight into the string (an import makes one for each of
/// its 60,000 files' rows: through byte arrays that was a tenth of writing them).
package func hexString(raw bytes: UnsafeRawBufferPointer) -> String {
    String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
        let digits: StaticString = "0123456789abcdef"
        let table = digits.utf8Start
        for (index, byte) in bytes.enumerated() {
            buffer[2 * index] = table[Int(byte >> 4)]
            buffer[2 * index + 1] = table[Int(byte & 0xF)]
        }
        return bytes.count * 2
    }
}

/// A SHA-256 digest as its 32 bytes, for lists of many: as hex, each is a 64-character string
/// on the heap (about 112 bytes with its header), and an import of 60,000 files kept 6.7 MB of
/// them until the rows were written.
package struct SHA256Digest: Sendable, Hashable {
    private var a: UInt64 = 0, b: UInt64 = 0, c: UInt64 = 0, d: UInt64 = 0

    /// From the digest's bytes (32 of them; fewer are padded with zeros, more are ignored).
    package init(_ bytes: some Sequence<UInt8>) {
        for (i, byte) in bytes.prefix(32).enumerated() {
            let value = UInt64(byte) << (56 - 8 * UInt64(i % 8))
            switch i / 8 {
            case 0: a |= value
            case 1: b |= value
            case 2: c |= value
            default: d |= value
            }
        }
    }

    /// The 64 lowercase hex digits.
    package var hex: String {
        withUnsafeBytes(of: (a.bigEndian, b.bigEndian, c.bigEndian, d.bigEndian)) { hexString(raw: $0) }
    }
}

extension FixedWidthInteger {
    /// The value's bytes, most significant first.
    package var bigEndianBytes: [UInt8] {
        (0..<Self.bitWidth / 8).reversed().map { UInt8(truncatingIfNeeded: self >> ($0 * 8)) }
    }
}
