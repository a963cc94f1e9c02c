import Foundation

/// A small file an input names (a key map, a file of articles, a sample feed), read whole, with
/// errors that say which file, what is wrong with it and what to give instead: one way for every
/// command that reads such a file.
package enum InputFile {
    /// The file's UTF-8 text. `what` names the file in errors ("the key map"); `notText` is the
    /// error id when the bytes are not UTF-8 (a key map is configuration, a sample is input).
    package static func text(_ path: String, what: String, hint: String, notText: ErrorID = .inputUnreadable) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GalleyError("cannot read \(what)", id: FileManager.default.fileExists(atPath: path) ? .inputUnreadable : .inputNotFound,
                              path: path, hint: hint)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw GalleyError("\(what) is not UTF-8 text", id: notText, path: path, hint: hint)
        }
        return text
    }

    /// The file's JSON value. Where it stops being JSON is in the error's path
    /// (`file:line:column`, as a key map's errors name theirs), the parser's words in its
    /// message (`nested deeper than 256 levels`).
    package static func json(_ path: String, what: String, hint: String) throws -> JSONValue {
        let text = try text(path, what: what, hint: hint)
        do {
            return try JSONValue.parse(text)
        } catch {
            throw GalleyError("\(what) is not valid JSON: \(error.message)", id: .inputUnreadable,
                              path: "\(path):\(error.line):\(error.column)", hint: hint)
        }
    }
}
