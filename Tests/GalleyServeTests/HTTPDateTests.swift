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
}
