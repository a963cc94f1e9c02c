import Foundation

/// Writing a file so that its path never holds a half-written one: the text goes to a hidden
/// temporary file beside it, which is then renamed into place.
package enum AtomicFile {
    /// A hidden temporary name beside `url`, unique to this process and call:
    /// `.<name>.<pid>-<random>.galley-tmp`. Every temporary Galley leaves beside a user's file
    /// has this shape, so it can be recognised and cleaned.
    package static func temporaryName(for url: URL) -> URL {
        url.deletingLastPathComponent()
            .appending(path: ".\(url.lastPathComponent).\(getpid())-\(UInt32.random(in: 0...UInt32.max)).galley-tmp")
    }

    /// Writes `text` to `url`. An existing file is replaced only when `replace` is true.
    package static func write(_ text: String, to url: URL, replace: Bool) throws {
        if !replace, FileManager.default.fileExists(atPath: url.path) {
            throw GalleyError("the output already exists", path: url.path, hint: "Pass --force to replace it.")
        }
        let temporary = temporaryName(for: url)
        do {
            try writeFile(temporary.path, text)
            if rename(temporary.path, url.path) != 0 {
                throw GalleyError("cannot write: \(String(cString: strerror(errno)))", path: url.path)
            }
        } catch {
            unlink(temporary.path)
            throw error as? GalleyError ?? GalleyError("cannot write: \(error)", path: url.path)
        }
    }
}
