import Testing
import GalleyTestSupport
@testable import GalleyCore
@testable import GalleyFormats

@Suite struct DateTimeTests {
    @Test(arguments: [
        ("2015-01-01", "2015-01-01T00:00:00.000+0000"),
        ("2015-01-02T10:00:00Z", "2015-01-02T10:00:00.000+0000"),
        ("2015-01-02T10:00:00.25+02:00", "2015-01-02T08:00:00.250+0000"),
        ("2015-01-02 10:00", "2015-01-02T10:00:00.000+0000"),
        ("2016-02-29T23:59:59-0130", "2016-03-01T01:29:59.000+0000"),
        ("1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999+0000"),
    ])
    func parsesAndFormatsInDumplingsForm(input: String, expected: String) throws {
        let date = try #require(ISODateTime(parsing: input))
        #expect(DumplingDate.iso(millisecondsSinceEpoch: date.millisecondsSinceEpoch) == expected)
    }

    @Test(arguments: ["", "2015", "2015-13-01", "2015-02-29", "01/01/2015", "2015-01-01T25:00", "2015-01-01Tnoon",
                      "2015-01-01T10:00:00+", "2015-01-01 junk"])
    func rejectsWhatIsNotISO8601(input: String) {
        #expect(ISODateTime(parsing: input) == nil)
    }

    /// The byte reader (ASCII texts) gives what the `Character` walk gives, on valid dates and
    /// on their damaged neighbours: 20,000 texts, each a date with up to three bytes inserted,
    /// removed or replaced by a seeded generator.
    @Test func theByteReaderAgreesWithTheCharacterWalk() {
        var random = SeededGenerator(state: 12)
        let seeds = ["2015-01-01", "2015-01-02T10:00:00Z", "2015-01-02T10:00:00.25+02:00", "2015-01-02 10:00",
                     "2016-02-29T23:59:59-0130", "1969-12-31T23:59:59.999Z", " 2026-01-04T18:30:00.000+0000\t",
                     "2015-01-01T10:00:00,1234 z", "2015-01-01t10:00 +05"]
        let pieces = ["0", "9", "-", "T", "t", " ", "\t", ":", ".", ",", "Z", "z", "+", "\r\n", "\n", "a", "00", "60", "24", "13", "31"]
        var disagreements: [String] = []
        var dates = 0
        for round in 0..<20_000 {
            var text = Array(seeds[round % seeds.count].utf8).map { String(UnicodeScalar($0)) }
            for _ in 0..<random.below(4) {
                let at = random.below(text.count + 1)
                switch random.below(3) {
                case 0: text.insert(pieces[random.below(pieces.count)], at: at)
                case 1: if at < text.count { text.remove(at: at) }
                default: if at < text.count { text[at] = pieces[random.below(pieces.count)] }
                }
            }
            let joined = text.joined()
            let expected = ISODateTime.parsedCharacters(joined)
            if ISODateTime.parsedASCII(joined) != .some(expected) { disagreements.append(joined.debugDescription) }
            if expected != nil { dates += 1 }
        }
        let firstFive = disagreements.prefix(5)
        #expect(disagreements.count == 0, "for example \(firstFive)")
        // Both answers are taken: thousands of the texts are still dates, the rest are not.
        #expect(dates > 2_000 && dates < 18_000, "\(dates) dates")
        // Beyond ASCII the `Character` walk answers: Unicode blanks are trimmed as Foundation does.
        #expect(ISODateTime.parsedASCII("\u{00A0}2015-01-01") == nil)
        #expect(ISODateTime(parsing: "\u{00A0}2015-01-01")?.isoDay == "2015-01-01")
        #expect(ISODateTime(parsing: "2015-01-0\u{0661}") == nil)
    }

    @Test func publishDateIsMonthDayYearOfTheDayAsWritten() throws {
        let date = try #require(ISODateTime(parsing: "2015-01-01T23:30:00-05:00"))
        #expect(date.dumplingPublishDate == "01/01/2015")
        #expect(date.monthAndYear == "January 2015")
    }

    @Test func dumplingPublishDatesNameRealDaysOnly() {
        #expect(ISODateTime(dumplingPublishDate: "1/5/2026")?.isoDay == "2026-01-05")
        #expect(ISODateTime(dumplingPublishDate: "02/29/2024")?.isoDay == "2024-02-29")
        for text in ["13/45/2015", "02/29/2015", "02/29/1900", "04/31/2020", "0/1/2020", "1/1/0", "1//2020", "a/1/2020", "1/1/2020/1"] {
            #expect(ISODateTime(dumplingPublishDate: text) == nil, "\(text)")
        }
    }
}
