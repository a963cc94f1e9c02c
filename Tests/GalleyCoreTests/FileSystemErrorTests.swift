import Foundation
import Testing
@testable import GalleyCore

/// File-system failures in words, from the nested errors Foundation raises.
@Suite struct FileSystemErrorTests {
    @Test(arguments: [
        (EACCES, "permission denied"), (ENOSPC, "the disk is full"), (EROFS, "the file system is read-only"),
        (ENOTDIR, "a part of the path is a file, not a folder"), (ENOENT, "a folder on the way does not exist"),
    ])
    func nestedPOSIXErrorsAreNamed(_ code: Int32, _ reason: String) {
        let posix = NSError(domain: NSPOSIXErrorDomain, code: Int(code))
        let cocoa = NSError(domain: NSCocoaErrorDomain, code: 512, userInfo: [NSUnderlyingErrorKey: posix])
        #expect(FileSystemError.describe(cocoa).reason == reason)
        #expect(FileSystemError.describe(posix).reason == reason)
    }

    @Test func cocoaCodesWithoutAnUnderlyingErrorAreNamedToo() {
        #expect(FileSystemError.describe(NSError(domain: NSCocoaErrorDomain, code: NSFileWriteOutOfSpaceError)).reason == "the disk is full")
    }
}
