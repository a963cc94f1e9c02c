#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-text byte questions answered over the text's contiguous UTF-8 a word at a time
/// (`memchr`, eight bytes per step) instead of a byte at a time through `String.UTF8View`'s
/// iterator, which checks each index: asked of every article body by the placeholder checks,
/// the two byte-by-byte passes were 0.29 CPU-s of a 30,000-article import (128 MB of bodies).
/// Hand-written because the standard library keeps its own ASCII flag internal.
package enum ByteScan {
    /// Whether every byte of `text`'s UTF-8 is ASCII (below 0x80).
    package static func isASCII(_ text: some StringProtocol) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { isASCII($0) } ?? text.utf8.allSatisfy { $0 < 0x80 }
    }

    /// Whether `text`'s UTF-8 holds `byte`.
    package static func contains(_ byte: UInt8, in text: some StringProtocol) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { contains(byte, in: $0) } ?? text.utf8.contains(byte)
    }

    package static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let high: UInt64 = 0x8080_8080_8080_8080
        var offset = 0
        // Four words per step, one test for the four.
        while offset + 32 <= bytes.count {
            let merged = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                | raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
                | raw.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self)
                | raw.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self)
            if merged & high != 0 { return false }
            offset += 32
        }
        while offset + 8 <= bytes.count {
            if raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & high != 0 { return false }
            offset += 8
        }
        while offset < bytes.count {
            if bytes[offset] >= 0x80 { return false }
            offset += 1
        }
        return true
    }

    package static func contains(_ byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
        return memchr(base, Int32(byte), bytes.count) != nil
    }
}
