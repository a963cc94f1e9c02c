internal import CSHA256
internal import Crypto

/// Incremental SHA-256 (the only file that computes one).
///
/// Where the CPU has the x86 SHA extensions, with Galley's own code for them
/// (Sources/CSHA256/sha256.c), which hashes two streams at once on one core at up to twice the
/// speed of one (`update(_:_:_:_:)`: an import's files and its kept zip, where the CPU gains by
/// it, `pairingPays`); one stream alone goes as fast
/// as BoringSSL's. Elsewhere over swift-crypto, which is BoringSSL on Linux and is in the binary
/// already for the feed's Ed25519 signatures (OpenSSL's libcrypto, wrapped before that, was a
/// second crypto library loaded by every command for this one function: 3.4 MB of an import's
/// resident memory).
public final class SHA256Hasher {
    /// Which code hashes: chosen once per hasher, from what the CPU has.
    private enum Engine {
        /// `galley_sha256` (`state` holds it).
        case extensions
        /// swift-crypto.
        case portable(Crypto.SHA256)
    }

    private var engine: Engine
    private var state = galley_sha256()

    /// Whether this CPU has the SHA extensions Galley's own code needs (asked once).
    package static let hasExtensions = galley_sha256_available() != 0

    public convenience init() { self.init(extensions: Self.hasExtensions) }

    /// Whether two streams hashed at once (`update(_:_:_:_:)`) go enough faster than one after
    /// the other to hash them together (an import's files and its kept zip, on one thread)
    /// instead of one after the other (the files first, the copy in the gaps: see
    /// `HashingThread`). It depends on the CPU's SHA unit, so it is measured, once per
    /// process (`measurePairing`, under a millisecond). Where the unit's rounds wait on the one
    /// before, a second stream fills the gaps (twice the speed of one on the reference CPU);
    /// where the unit is busy anyway the pair gains little, and the one thread hashing both
    /// became what an import waited for (`bench/import_bench.py`). The line is halfway: the
    /// pair at least 1.5x as fast as one stream. Never without the SHA extensions.
    package static let pairingPays = measurePairing()

    /// Times 64 KiB hashed as one stream against the same bytes as two streams at once, the
    /// best of five tries each; whether the pair is at least 1.5x as fast.
    static func measurePairing() -> Bool {
        guard hasExtensions else { return false }
        let half = 32 << 10
        let bytes = [UInt8](repeating: 0x5A, count: 2 * half)  // the bytes do not change the speed
        let clock = ContinuousClock()
        var (alone, paired) = (Duration.seconds(1), Duration.seconds(1))
        bytes.withUnsafeBytes { all in
            let a = UnsafeRawBufferPointer(rebasing: all[..<half]), b = UnsafeRawBufferPointer(rebasing: all[half...])
            for _ in 0..<5 {
                let first = SHA256Hasher(), second = SHA256Hasher()
                alone = min(alone, clock.measure { first.update(a); first.update(b) })
                paired = min(paired, clock.measure { update(first, a, second, b) })
            }
        }
        return paired * 3 <= alone * 2
    }

    /// `extensions: false` hashes with swift-crypto whatever the CPU (the tests compare the two);
    /// `true` is taken only where the CPU has them.
    package init(extensions: Bool) {
        if extensions && Self.hasExtensions {
            engine = .extensions
            galley_sha256_init(&state)
        } else {
            engine = .portable(Crypto.SHA256())
        }
    }

    public func update(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        switch engine {
        case .extensions: galley_sha256_update(&state, buffer.baseAddress, buffer.count)
        case .portable(var hash):
            hash.update(bufferPointer: buffer)
            engine = .portable(hash)
        }
    }

    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// `a` into `first` and `b` into `second` (two different hashers), as `first.update(a)`
    /// then `second.update(b)` would, but the blocks both have hashed at once where both use the
    /// SHA extensions: for two streams that advance together, such as an import's files and its
    /// kept zip, 3.5 GB/s on one core instead of 1.8.
    package static func update(_ first: SHA256Hasher, _ a: UnsafeRawBufferPointer, _ second: SHA256Hasher, _ b: UnsafeRawBufferPointer) {
        precondition(first !== second, "two streams need two hashers")
        guard case .extensions = first.engine, case .extensions = second.engine, a.count > 0, b.count > 0 else {
            first.update(a)
            second.update(b)
            return
        }
        galley_sha256_update2(&first.state, a.baseAddress, a.count, &second.state, b.baseAddress, b.count)
    }

    /// The digest. The hasher cannot be used afterwards.
    package func finalize() -> SHA256Digest {
        switch engine {
        case .extensions:
            var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            withUnsafeMutableBytes(of: &bytes) { galley_sha256_final(&state, $0.baseAddress?.assumingMemoryBound(to: UInt8.self)) }
            return withUnsafeBytes(of: bytes) { SHA256Digest($0) }
        case .portable(let hash):
            return SHA256Digest(hash.finalize())
        }
    }

    /// The digest as 64 lowercase hex digits. The hasher cannot be used afterwards.
    public func finalizeHex() -> String {
        finalize().hex
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
