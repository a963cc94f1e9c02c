extension String {
    /// The text with each UTF-8 byte range replaced by new text, in one pass: for rewriting
    /// what a byte scanner found (placeholders, attribute values). Edits are applied in order
    /// of their start; one that overlaps an earlier edit is skipped.
    package func replacingUTF8Ranges(_ edits: [(range: Range<Int>, with: String)]) -> String {
        guard !edits.isEmpty else { return self }
        let bytes = Array(utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 64 * edits.count)
        var position = 0
        for edit in edits.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) where edit.range.lowerBound >= position {
            out.append(contentsOf: bytes[position..<edit.range.lowerBound])
            out.append(contentsOf: edit.with.utf8)
            position = edit.range.upperBound
        }
        out.append(contentsOf: bytes[position...])
        return String(decoding: out, as: UTF8.self)
    }
}
