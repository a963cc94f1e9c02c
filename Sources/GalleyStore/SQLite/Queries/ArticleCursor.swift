import Foundation
import GRDB
import GalleyCore

/// Where a page of articles ended: the last row's sort key, apple_id and placement, as an opaque
/// URL-safe token. Keyset paging, not offsets: an issue imported between two pages shifts no
/// row into the next page twice and none out of it.
struct ArticleCursor {
    var byDate: Bool
    /// The first sort key: the publish day (text) or the article's date (milliseconds).
    var key: Key
    var appleID: String
    var placement: Int64

    enum Key: Equatable {
        case number(Int64)
        case text(String)

        /// The key as SQLite binds it.
        var databaseValue: DatabaseValue {
            switch self {
            case .number(let value): value.databaseValue
            case .text(let value): value.databaseValue
            }
        }
    }

    init(byDate: Bool, key: Key, appleID: String, placement: Int64) {
        (self.byDate, self.key, self.appleID, self.placement) = (byDate, key, appleID, placement)
    }

    /// The first sort key, as SQL over `article a JOIN issue i`. Missing values sort last.
    static func keySQL(byDate: Bool) -> String {
        byDate ? "coalesce(a.dateMS, -9223372036854775807)" : "coalesce(i.publishDay, '')"
    }

    init(row: Row, byDate: Bool) {
        self.byDate = byDate
        let value: DatabaseValue = row["cursorKey"]
        switch value.storage {
        case .int64(let number): key = .number(number)
        case .string(let text): key = .text(text)
        default: key = .text("")
        }
        appleID = row["cursorIssue"]
        placement = row["placement"]
    }

    /// `d.` or `i.` (the order), then base64url of `key\u{1F}apple_id\u{1F}placement`.
    var encoded: String {
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

    /// A cursor this listing gave, or nil for anything else (never a crash on a forged one).
    init?(encoded: String) {
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
