/// Strings kept back to back in one buffer, each found by its number: for lists that grow with
/// an issue (a name for each of 60,000 files or assets), where a `String` each is a heap object
/// of its own (about 64 bytes for a 20-byte name) and a slice of another string keeps that
/// whole string alive.
package struct PackedStrings: RandomAccessCollection, Sendable {
    private var bytes: [UInt8] = []
    /// Where each string ends in `bytes`.
    private var ends: [Int] = []

    package init() {}

    package var startIndex: Int { 0 }
    package var endIndex: Int { ends.count }

    package subscript(position: Int) -> String {
        let start = position == 0 ? 0 : ends[position - 1]
        return String(decoding: bytes[start..<ends[position]], as: UTF8.self)
    }

    /// Adds `text` and returns its number.
    @discardableResult
    package mutating func append(_ text: some StringProtocol) -> Int {
        bytes.append(contentsOf: text.utf8)
        ends.append(bytes.count)
        return ends.count - 1
    }

    /// Makes room for `count` strings (not their bytes, whose size is not known yet).
    package mutating func reserveCapacity(_ count: Int) { ends.reserveCapacity(count) }
}
