import Foundation

/// The scheme of a URL as a browser's URL parser reads it (WHATWG URL): leading and trailing C0
/// controls and spaces stripped, tabs and newlines removed anywhere, then the letters before the
/// first `:`, lowercased. The one reading of `javascript:` that body checks, the SVG scan and the
/// render sanitizer share, so that what validate reports and what render removes never differ.
public enum URLScheme {
    /// `javascript`, `https`, `data`…; nil for a relative URL (no scheme, or one that is not a
    /// valid scheme, which browsers then read as a path).
    public static func of(_ value: String) -> String? {
        var scalars = value.unicodeScalars.filter { $0 != "\t" && $0 != "\n" && $0 != "\r" }[...]
        while let first = scalars.first, first.value <= 0x20 { scalars.removeFirst() }
        var scheme = ""
        for scalar in scalars {
            if scalar == ":" { return scheme.isEmpty ? nil : scheme }
            let isLetter = scalar.isASCII && CharacterSet.letters.contains(scalar)
            let isOther = scalar.isASCII && (CharacterSet.decimalDigits.contains(scalar) || "+-.".unicodeScalars.contains(scalar))
            guard isLetter || (!scheme.isEmpty && isOther) else { return nil }
            scheme.unicodeScalars.append(scalar)
            if scheme.utf8.count > 32 { return nil }
        }
        return nil
    }

    /// Whether `value` is a `javascript:` URL.
    public static func isJavaScript(_ value: String) -> Bool { of(value)?.lowercased() == "javascript" }
}
