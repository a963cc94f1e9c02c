/// A single `Range: bytes=...` request (RFC 9110 §14.1.2), resolved against a file's size.
/// Multiple ranges are answered with the whole file, as RFC 9110 allows: a resumed download
/// asks for one.
public enum ByteRange: Sendable, Equatable {
    /// Serve the whole file (no Range, or one that is ignored).
    case whole
    /// Serve these bytes with 206.
    case part(ClosedRange<Int64>)
    /// 416: nothing of the file is in the range.
    case unsatisfiable

    public init(header: String?, size: Int64) {
        guard let header = header?.trimmingCharacters(in: .whitespaces), header.lowercased().hasPrefix("bytes=") else {
            self = .whole
            return
        }
        let spec = header.dropFirst("bytes=".count)
        guard !spec.contains(",") else {
            self = .whole
            return
        }
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard parts.count == 2 else {
            self = .whole
            return
        }
        let digits = { (text: String) in !text.isEmpty && text.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } && text.utf8.count <= 18 }
        if parts[0].isEmpty {
            // bytes=-N: the last N bytes.
            guard digits(parts[1]), let count = Int64(parts[1]) else { self = .whole; return }
            guard count > 0, size > 0 else { self = .unsatisfiable; return }
            self = .part(max(0, size - count)...(size - 1))
            return
        }
        guard digits(parts[0]), let start = Int64(parts[0]) else { self = .whole; return }
        guard start < size else { self = .unsatisfiable; return }
        if parts[1].isEmpty {
            self = .part(start...(size - 1))
            return
        }
        guard digits(parts[1]), let end = Int64(parts[1]) else { self = .whole; return }
        guard end >= start else { self = .whole; return }
        self = .part(start...min(end, size - 1))
    }
}
