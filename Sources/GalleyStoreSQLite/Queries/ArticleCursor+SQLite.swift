import Foundation
import GRDB
import GalleyCore
import GalleyStore

/// The cursor as the SQLite store reads and binds it.
extension ArticleCursor {
    /// The first sort key, as SQL over `article a JOIN issue i`. Missing values sort last.
    static func keySQL(byDate: Bool) -> String {
        byDate ? "coalesce(a.dateMS, -9223372036854775807)" : "coalesce(i.publishDay, '')"
    }

    init(row: Row, byDate: Bool) {
        let value: DatabaseValue = row["cursorKey"]
        let key: Key
        switch value.storage {
        case .int64(let number): key = .number(number)
        case .string(let text): key = .text(text)
        default: key = .text("")
        }
        self.init(byDate: byDate, key: key, appleID: row["cursorIssue"], placement: row["placement"])
    }
}

extension ArticleCursor.Key {
    /// The key as SQLite binds it.
    var databaseValue: DatabaseValue {
        switch self {
        case .number(let value): value.databaseValue
        case .text(let value): value.databaseValue
        }
    }
}
