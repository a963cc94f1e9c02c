import Testing
@testable import GalleyCore
@testable import GalleyFormats
@testable import GalleyKit

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
