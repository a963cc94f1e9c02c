import GalleyCore

extension ArticleDetail {
    /// One custom metadata value of an article (`customMeta`, an object or a JSON text).
    public func meta(_ key: String) -> JSONValue? {
        switch customMeta.value {
        case .object: return customMeta.value[key]
        case .string(let text):
            return JSONValue(parsing: text)?[key]
        default: return nil
        }
    }
}
