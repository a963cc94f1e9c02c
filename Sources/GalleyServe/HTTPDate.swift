import Foundation
import GalleyCore

/// HTTP dates (RFC 9110's IMF-fixdate): `Date` of the early answers (`RevalidationHandler`,
/// once a second) and `Last-Modified` of downloads. Written out rather than with
/// `DateFormatter` or `strftime`, which follow the process's locale.
enum HTTPDate {
    static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Seconds since 1970 as `Tue, 24 Nov 2026 22:35:54 GMT`.
    static func format(_ seconds: Int) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let inDay = seconds - days * 86_400
        let (year, month, day) = ISODateTime.civilFromDays(days)
        let weekday = (days % 7 + 7) % 7
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(Self.days[weekday]), \(two(day)) \(months[month - 1]) \(year) "
            + "\(two(inDay / 3600)):\(two(inDay % 3600 / 60)):\(two(inDay % 60)) GMT"
    }
}
