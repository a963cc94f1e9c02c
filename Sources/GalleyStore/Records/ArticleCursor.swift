import Foundation
import GalleyCore

/// Where a page of articles ended: the last row's sort key, apple_id and placement, as an opaque
/// URL-safe token. Keyset paging, not offsets: an issue imported between two pages shifts no
/// row into the next page twice and none out of it.
package struct ArticleCursor {
    package var byDate: Bool
    /// The first sort key: the issue's publish day (text) or the article's date (milliseconds).
    package var key: Key
    package var appleID: String
    package var placement: Int64

    package enum Key: Equatable {
        case number(Int64)
        case text(String)
    }

    package init(byDate: Bool, key: Key, appleID: String, placement: Int64) {
        (self.byDate, self.key, self.appleID, self.placement) = (byDate, key, appleID, placement)
    }

    /// `d.` or `i.` (the order), then base64url of `key\u{1F}apple_id\u{1F}placement`.
    package var encoded: String {
        let keyText: String
        switch key {
        case .number(let value): keyText = "n\(value)"
        case .text(let value): keyText = "s\(value)"
        }
        let raw = [keyText, appleID, String(placement)].joined(separator: "\u{1F}")
        let base64 = Data(raw.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return (byDate ? "d." : "i.") + base64
    }

    /// The usage error for a cursor that another listing gave (a malformed one, another order's).
    package static let notThisListing = GalleyError("`cursor` is not one this listing gave", id: .usage,
                                                    hint: "Use the Link rel=\"next\" address as given, with the same order.")

    /// The usage error for a cursor of another issue's listing given to issue `appleID`'s.
    package static func otherIssue(_ appleID: String) -> GalleyError {
        GalleyError("`cursor` is not one this listing gave: it is from another issue's listing, not \(appleID)'s", id: .usage,
                    hint: "Use the Link rel=\"next\" address of this issue's listing as given.")
    }

    /// A cursor this listing gave, or nil for anything else (never a crash on a forged one).
    package init?(encoded: String) {
        guard encoded.utf8.count <= 2048 else { return nil }
        let order = encoded.prefix(2)
        guard order == "d." || order == "i." else { return nil }
        var base64 = encoded.dropFirst(2).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let raw = String(data: data, encoding: .utf8) else { return nil }
        let parts = raw.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let placement = Int64(parts[2]), let kind = parts[0].first else { return nil }
        let value = String(parts[0].dropFirst())
        switch kind {
        case "n":
            guard let number = Int64(value) else { return nil }
            key = .number(number)
        case "s": key = .text(value)
        default: return nil
        }
        byDate = order == "d."
        appleID = parts[1]
        self.placement = placement
    }
}
