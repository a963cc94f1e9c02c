import Foundation
@testable import GalleyServe
import Testing

/// HTTP dates (the early answers' `Date`, downloads' `Last-Modified`), against Foundation's
/// formatter in the POSIX locale: epoch, leap days, century years, the far future and before 1970.
@Suite struct HTTPDateTests {
    @Test(arguments: [0, 951_782_400, 951_868_799, 1_709_164_800, 1_795_560_954, 4_107_542_399, 253_402_300_799, -1, -86_400 * 365])
    func imfFixdateAsFoundationWritesIt(seconds: Int) {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        #expect(HTTPDate.format(seconds) == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))))
    }

    @Test(arguments: [0, 951_782_400, 1_709_164_800, 1_795_560_954, 253_402_300_799])
    func whatItWritesItReads(seconds: Int) {
        #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds)
    }

    @Test(arguments: ["", "Tuesday, 24-Nov-26 22:35:54 GMT", "Tue Nov 24 22:35:54 2026", "Tue, 24 Nov 2026 22:35:54 UTC",
                      "Tue, 32 Nov 2026 22:35:54 GMT", "Tue, 24 Nox 2026 22:35:54 GMT", "Tue, 24 Nov 2026 25:35:54 GMT"])
    func anythingElseIsNoDate(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }
}
