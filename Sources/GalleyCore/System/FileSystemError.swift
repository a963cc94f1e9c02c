import Foundation

/// A Foundation or POSIX file-system failure in words: what went wrong, and how to fix it,
/// instead of `NSCocoaErrorDomain Code=513`.
public enum FileSystemError {
    /// The reason and a hint for `error`, which was raised doing something at `path`.
    public static func describe(_ error: any Error) -> (reason: String, hint: String) {
        switch posixCode(error) {
        case EACCES, EPERM:
            return ("permission denied", "Check the owner and permissions of the folder (ls -ld), or choose a folder you can write.")
        case ENOENT:
            return ("a folder on the way does not exist", "Check the path, or create the folder first.")
        case ENOTDIR:
            return ("a part of the path is a file, not a folder", "Check the path: a file stands where a folder should be.")
        case EISDIR:
            return ("it is a folder, not a file", "Give the file itself.")
        case ENOSPC, EDQUOT:
            return ("the disk is full", "Free some space (df -h shows how much is left) and run again.")
        case EROFS:
            return ("the file system is read-only", "Choose a folder on a writable disk.")
        case EEXIST:
            return ("something already exists there", "Remove it, or choose another path.")
        case ENAMETOOLONG:
            return ("the name is too long", "Use a shorter path.")
        case ELOOP:
            return ("symbolic links lead round in a loop", "Fix or remove the links.")
        case EIO:
            return ("an input/output error (the disk may be failing)", "Check the disk (dmesg), then run again.")
        case let code?:
            return (String(cString: strerror(code)).lowercased(), "Check the path and its permissions.")
        case nil:
            return (String(describing: error), "Check the path and its permissions.")
        }
    }

    /// The POSIX error number inside `error`, when it carries one.
    static func posixCode(_ error: any Error) -> Int32? {
        var current: NSError? = error as NSError
        for _ in 0..<4 {
            guard let ns = current else { return nil }
            if ns.domain == NSPOSIXErrorDomain { return Int32(ns.code) }
            if ns.domain == NSCocoaErrorDomain {
                switch ns.code {
                case NSFileWriteNoPermissionError, NSFileReadNoPermissionError: return EACCES
                case NSFileWriteOutOfSpaceError: return ENOSPC
                case NSFileWriteVolumeReadOnlyError: return EROFS
                case NSFileNoSuchFileError, NSFileReadNoSuchFileError: return ENOENT
                case NSFileWriteFileExistsError: return EEXIST
                default: break
                }
            }
            current = (ns.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        }
        return nil
    }
}
