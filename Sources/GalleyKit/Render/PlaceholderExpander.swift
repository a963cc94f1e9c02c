import Foundation
import GalleyCore
import GalleyFormats

/// What happens to a placeholder whose id names no asset.
public enum MissingAssetPolicy: String, Sendable, CaseIterable {
    /// Replaced with nothing (Dumpling since 2016), with a warning.
    case remove
    /// Left in place as an inert comment (Dumpling before 2016).
    case keep
    /// The render fails.
    case error
}

/// Replaces every placeholder in a body with its asset's markup.
///
/// The default pattern is Dumpling's `<!-- [ASSET: id] -->`, spelled exactly. A custom pattern
/// is a regular expression with a named group `id` that captures the id; unlike Dumpling's
/// `setAssetPattern`, it works for any shape.
public struct PlaceholderExpander: @unchecked Sendable {
    private let custom: NSRegularExpression?
    public let markup: AssetMarkup
    public let missing: MissingAssetPolicy

    public init(pattern: String? = nil, markup: AssetMarkup, missing: MissingAssetPolicy = .remove) throws {
        if let pattern {
            do {
                custom = try NSRegularExpression(pattern: pattern)
            } catch {
                throw GalleyError("the pattern is not a valid regular expression: \(pattern)", id: .configuration,
                                  hint: "Use ICU syntax, e.g. `\\{\\{asset (?<id>[0-9a-f]{24})\\}\\}`.")
            }
            guard pattern.contains("(?<id>") else {
                throw GalleyError("the pattern has no named group `id`", id: .configuration,
                                  hint: "Capture the asset id with `(?<id>...)`, e.g. `<!-- asset:(?<id>\\w+) -->`.")
            }
        } else {
            custom = nil
        }
        self.markup = markup
        self.missing = missing
    }

    public struct Result: Sendable {
        public var html: String
        /// Ids that named no asset, in order of appearance.
        public var missingIDs: [String]
    }

    /// - Parameter lookup: the asset for an id (the article's own first, then the issue's).
    public func expand(_ body: String, lookup: (String) -> AssetRecord?) -> Result {
        var out = ""
        out.reserveCapacity(body.utf8.count + 256)
        var missingIDs: [String] = []
        var position = body.startIndex
        for (range, id) in matches(in: body) {
            var before = body[position..<range.lowerBound]
            position = range.upperBound
            guard let asset = lookup(id) else {
                missingIDs.append(id)
                out += before
                if missing == .keep { out += body[range] }
                continue
            }
            var after = ""
            // Dumpling moves a `<p>` that directly precedes the placeholder to after the asset.
            if markup.style == .dumpling && before.hasSuffix("<p>") {
                before = before.dropLast(3)
                after = "<p>"
            }
            out += before
            out += markup.html(for: asset)
            out += after
        }
        out += body[position...]
        return Result(html: out, missingIDs: missingIDs)
    }

    /// Whether `text` is one placeholder, whole: such comments survive sanitising.
    public func isPlaceholder(_ text: String) -> Bool {
        guard let match = matches(in: text).first else { return false }
        return match.0 == text.startIndex..<text.endIndex
    }

    private func matches(in body: String) -> [(Range<String.Index>, String)] {
        guard let custom else {
            return Placeholder.scan(body).filter(\.isExact).map { match in
                let start = body.utf8.index(body.utf8.startIndex, offsetBy: match.utf8Range.lowerBound)
                let end = body.utf8.index(body.utf8.startIndex, offsetBy: match.utf8Range.upperBound)
                return (start..<end, match.key)
            }
        }
        let range = NSRange(body.startIndex..<body.endIndex, in: body)
        return custom.matches(in: body, range: range).compactMap { result in
            guard let whole = Range(result.range, in: body),
                  let idRange = Range(result.range(withName: "id"), in: body) else { return nil }
            return (whole, String(body[idRange]))
        }
    }
}
