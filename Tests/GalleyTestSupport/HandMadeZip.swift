import Foundation

/// Zips written byte by byte, for tests of the readers that must refuse damage: each member's
/// local header, data and central-directory record as given (a wrong CRC or size stays wrong).
/// Deflated members use deflate's stored blocks, so no compressor is needed.
public enum HandMadeZip {
    public struct Member {
        public var name: String
        public var method: UInt16
        /// The entry's data as stored in the zip (compressed for method 8).
        public var data: [UInt8]
        public var crc: UInt32
        public var size: Int

        public init(name: String, method: UInt16, data: [UInt8], crc: UInt32, size: Int) {
            (self.name, self.method, self.data, self.crc, self.size) = (name, method, data, crc, size)
        }
    }

    public static func stored(_ name: String, _ text: String) -> Member {
        let bytes = Array(text.utf8)
        return Member(name: name, method: 0, data: bytes, crc: crc32(bytes), size: bytes.count)
    }

    /// `text` as deflate's stored blocks (at most 65,535 bytes each): a final-block bit, LEN,
    /// NLEN, the bytes.
    public static func deflated(_ name: String, _ text: String) -> Member {
        let bytes = Array(text.utf8)
        var data: [UInt8] = []
        var start = 0
        repeat {
            let length = min(65_535, bytes.count - start)
            let final: UInt8 = start + length == bytes.count ? 1 : 0
            data += [final, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            data += bytes[start..<(start + length)]
            start += length
        } while start < bytes.count
        return Member(name: name, method: 8, data: data, crc: crc32(bytes), size: bytes.count)
    }

    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// A zip of `members` in that order in the file; the central directory lists them in
    /// `directoryOrder` (default: the same).
    public static func zip(_ members: [Member], directoryOrder: [Int]? = nil) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }
        var body: [UInt8] = []
        var centrals: [[UInt8]] = []
        for member in members {
            let name = Array(member.name.utf8)
            let offset = body.count
            body += le32(0x0403_4B50) + le16(20) + le16(0) + le16(Int(member.method)) + le16(0) + le16(0x21)
                + le32(Int(member.crc)) + le32(member.data.count) + le32(member.size) + le16(name.count) + le16(0) + name
                + member.data
            centrals.append(le32(0x0201_4B50) + le16(0x0314) + le16(20) + le16(0) + le16(Int(member.method)) + le16(0)
                + le16(0x21) + le32(Int(member.crc)) + le32(member.data.count) + le32(member.size) + le16(name.count)
                + le16(0) + le16(0) + le16(0) + le16(0) + le32(0o100644 << 16) + le32(offset) + name)
        }
        let directory = (directoryOrder ?? Array(members.indices)).flatMap { centrals[$0] }
        let end = le32(0x0605_4B50) + le16(0) + le16(0) + le16(members.count) + le16(members.count)
            + le32(directory.count) + le32(body.count) + le16(0)
        return body + directory + end
    }
}
