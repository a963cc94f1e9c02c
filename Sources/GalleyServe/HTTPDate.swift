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

    /// An IMF-fixdate (`format`'s own shape) as seconds since 1970; nil for anything else (RFC
    /// 9110 has a recipient ignore an `If-Modified-Since` it cannot parse).
    static func parse(_ text: String) -> Int? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", parts[0].count == 4, parts[0].hasSuffix(","),
              let day = Int(parts[1]), (1...31).contains(day),
              let month = months.firstIndex(of: String(parts[2])),
              let year = Int(parts[3]), (1970...9999).contains(year) else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        let days = ISODateTime.daysFromCivil(year: year, month: month + 1, day: day)
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }
}
