import Foundation

/// An ISO 8601 date or date-time as an editor writes it in a source file
/// (`2015-01-01`, `2015-01-01T10:00:00Z`, `2015-01-01 10:00:00.250+02:00`).
///
/// Parsed by hand: no `DateFormatter`, so neither the locale nor the time zone of the
/// machine can change a result.
public struct ISODateTime: Sendable, Hashable {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int = 0
    public var minute: Int = 0
    public var second: Int = 0
    public var millisecond: Int = 0
    /// Offset from UTC in minutes as written; `nil` when the text gave none (read as UTC).
    public var offsetMinutes: Int?
    /// Whether the text had a time part.
    public var hasTime: Bool = false

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses the forms above; `nil` when the text is not one of them or names a day that
    /// does not exist.
    public init?(parsing text: String) {
        // An ASCII text (every date a packer writes) is read byte by byte; any other goes
        // through `Character`s below, which reach the same answer for ASCII. At 30,000 articles
        // the `Character` walk was 11% of the thread that reads latest.json (~0.2 CPU-s).
        if let ascii = Self.parsedASCII(text) {
            guard let date = ascii else { return nil }
            self = date
            return
        }
        guard let date = Self.parsedCharacters(text) else { return nil }
        self = date
    }

    /// `init(parsing:)` through `Character`s: for any text (the tests hold the byte reader to
    /// it on ASCII ones).
    static func parsedCharacters(_ text: String) -> ISODateTime? {
        var s = Substring(text.trimmingWhitespaces())
        func digits(_ n: Int) -> Int? {
            guard s.count >= n else { return nil }
            let part = s.prefix(n)
            guard part.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(part) else { return nil }
            s = s.dropFirst(n)
            return value
        }
        func take(_ c: Character) -> Bool {
            guard s.first == c else { return false }
            s = s.dropFirst()
            return true
        }
        guard let y = digits(4), take("-"), let mo = digits(2), take("-"), let d = digits(2) else { return nil }
        var date = ISODateTime(year: y, month: mo, day: d)
        if !s.isEmpty {
            guard take("T") || take("t") || take(" ") else { return nil }
            guard let h = digits(2), take(":"), let mi = digits(2) else { return nil }
            date.hour = h
            date.minute = mi
            date.hasTime = true
            if take(":") {
                guard let sec = digits(2) else { return nil }
                date.second = sec
                if take(".") || take(",") {
                    var fraction = ""
                    while let c = s.first, c.isASCII, c.isNumber {
                        fraction.append(c)
                        s = s.dropFirst()
                    }
                    guard !fraction.isEmpty else { return nil }
                    let padded = (fraction + "00").prefix(3)
                    date.millisecond = Int(padded) ?? 0
                }
            }
            s = Substring(s.trimmingWhitespaces())
            if take("Z") || take("z") {
                date.offsetMinutes = 0
            } else if let sign = s.first, sign == "+" || sign == "-" {
                s = s.dropFirst()
                guard let oh = digits(2) else { return nil }
                _ = take(":")
                let om = digits(2) ?? 0
                guard oh <= 23, om <= 59 else { return nil }
                date.offsetMinutes = (sign == "-" ? -1 : 1) * (oh * 60 + om)
            }
        }
        guard s.isEmpty else { return nil }
        guard (1...12).contains(date.month), date.day >= 1, date.day <= daysIn(month: date.month, year: date.year),
              date.hour <= 23, date.minute <= 59, date.second <= 60
        else { return nil }
        return date
    }

    /// `init(parsing:)` on an ASCII text's bytes: `.some(nil)` when it is not a date, `nil` when
    /// the text is not ASCII (for the caller's `Character` walk, which handles blanks beyond
    /// ASCII as Foundation does).
    static func parsedASCII(_ text: String) -> ISODateTime?? {
        var text = text
        return text.withUTF8 { bytes -> ISODateTime?? in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            return .some(parse(bytes))
        }
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> ISODateTime? {
        var i = 0
        var end = bytes.count
        while i < end, bytes[i].isASCIIBlank(newlines: false) { i += 1 }
        while i < end, bytes[end - 1].isASCIIBlank(newlines: false) { end -= 1 }
        func digits(_ n: Int) -> Int? {
            guard end - i >= n else { return nil }
            var value = 0
            for k in i..<(i + n) {
                let byte = bytes[k]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            i += n
            return value
        }
        func take(_ c: UInt8) -> Bool {
            guard i < end, bytes[i] == c else { return false }
            i += 1
            return true
        }
        guard let y = digits(4), take(0x2D), let mo = digits(2), take(0x2D), let d = digits(2) else { return nil }
        var date = ISODateTime(year: y, month: mo, day: d)
        if i < end {
            guard take(0x54) || take(0x74) || take(0x20) else { return nil }  // T, t, space
            guard let h = digits(2), take(0x3A), let mi = digits(2) else { return nil }
            date.hour = h
            date.minute = mi
            date.hasTime = true
            if take(0x3A) {
                guard let sec = digits(2) else { return nil }
                date.second = sec
                if take(0x2E) || take(0x2C) {  // . or ,
                    let start = i
                    var millisecond = 0
                    while i < end, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                        // The first three digits, as milliseconds ("25" is 250); the rest is cut.
                        if i - start < 3 { millisecond = millisecond * 10 + Int(bytes[i] - 0x30) }
                        i += 1
                    }
                    guard i > start else { return nil }
                    for _ in min(i - start, 3)..<3 { millisecond *= 10 }
                    date.millisecond = millisecond
                }
            }
            while i < end, bytes[i].isASCIIBlank(newlines: false) { i += 1 }
            if take(0x5A) || take(0x7A) {  // Z, z
                date.offsetMinutes = 0
            } else if i < end, bytes[i] == 0x2B || bytes[i] == 0x2D {  // + or -
                let negative = bytes[i] == 0x2D
                i += 1
                guard let oh = digits(2) else { return nil }
                _ = take(0x3A)
                let om = digits(2) ?? 0
                guard oh <= 23, om <= 59 else { return nil }
                date.offsetMinutes = (negative ? -1 : 1) * (oh * 60 + om)
            }
        }
        guard i == end else { return nil }
        guard (1...12).contains(date.month), date.day >= 1, date.day <= daysIn(month: date.month, year: date.year),
              date.hour <= 23, date.minute <= 59, date.second <= 60
        else { return nil }
        return date
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Milliseconds since 1970-01-01T00:00Z; a text without an offset is read as UTC.
    public var millisecondsSinceEpoch: Int64 {
        let days = Int64(Self.daysFromCivil(year: year, month: month, day: day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64((offsetMinutes ?? 0) * 60)
        return seconds * 1000 + Int64(millisecond)
    }

    /// `MM/dd/yyyy` of the calendar day as written: Dumpling's `publish_date` form.
    public var dumplingPublishDate: String {
        pad(month, 2) + "/" + pad(day, 2) + "/" + pad(year, 4)
    }

    /// The day a Dumpling `publish_date` (`M/d/yyyy`, numbers only) names; `nil` for any other
    /// shape and for a day the calendar does not have (`13/45/2015`, `02/29/2015`).
    public init?(dumplingPublishDate text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.count <= 4 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let month = Int(parts[0]), let day = Int(parts[1]), let year = Int(parts[2]),
              year >= 1, (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year)
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// `yyyy-MM-dd` of the calendar day, which sorts as the days do.
    public var isoDay: String { pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) }

    /// `January 2015`: the default display date.
    public var monthAndYear: String { Self.monthNames[month - 1] + " " + String(year) }

    package static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September",
        "October", "November", "December",
    ]

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    package static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm).
    package static func civilFromDays(_ z0: Int) -> (year: Int, month: Int, day: Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

/// Formats instants the way Dumpling's parsers accept them.
public enum DumplingDate {
    /// RFC 3339 in UTC (`2026-01-04T18:30:00.000Z`): how the store's JSON gives instants,
    /// whatever form the wire format used. A text that is not a date comes back unchanged.
    public static func rfc3339(_ text: String) -> String {
        guard let parsed = ISODateTime(parsing: text), parsed.hasTime else {
            return ISODateTime(parsing: text)?.isoDay ?? text
        }
        let dumpling = iso(millisecondsSinceEpoch: parsed.millisecondsSinceEpoch)
        return String(dumpling.dropLast(5)) + "Z"
    }

    /// `date` as `rfc3339(_:)` gives it, to the millisecond.
    public static func rfc3339(date: Date) -> String {
        rfc3339(iso(millisecondsSinceEpoch: Int64((date.timeIntervalSince1970 * 1000).rounded(.down))))
    }

    /// `2026-01-05` for Dumpling's `01/05/2026`; a text of another shape comes back unchanged.
    public static func isoDay(publishDate text: String) -> String {
        ISODateTime(dumplingPublishDate: text)?.isoDay ?? text
    }

    /// `yyyy-MM-dd'T'HH:mm:ss.SSS+0000` in UTC: the one form both of Dumpling's ISO parsers
    /// read (wire format §2.6).
    public static func iso(millisecondsSinceEpoch ms: Int64) -> String {
        let totalSeconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = Int(ms - totalSeconds * 1000)
        let days = Int(totalSeconds >= 0 ? totalSeconds / 86_400 : (totalSeconds - 86_399) / 86_400)
        let secondsOfDay = Int(totalSeconds - Int64(days) * 86_400)
        let (y, m, d) = ISODateTime.civilFromDays(days)
        return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T" + pad(secondsOfDay / 3600, 2) + ":"
            + pad(secondsOfDay % 3600 / 60, 2) + ":" + pad(secondsOfDay % 60, 2) + "." + pad(millis, 3) + "+0000"
    }
}

package func pad(_ value: Int, _ width: Int) -> String {
    let text = String(value)
    return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
}
