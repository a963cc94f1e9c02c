import Foundation

/// Every file under a folder with its bytes (keyed by relative path), to prove an operation
/// changed nothing. SQLite's shared-memory index (`-shm`) and an empty write-ahead log are left
/// out: any reader of a store makes them (an import reads the store to compare versions), and
/// they hold no content. A log with anything in it is kept, so a write is still seen.
public enum StoreSnapshot {
    public static func of(_ folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let name = enumerator?.nextObject() as? String {
            if name.hasSuffix(".sqlite-shm") { continue }
            if name.hasSuffix(".sqlite-wal"), (try? FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size] as? Int) == 0 { continue }
            let path = folder + "/" + name
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        }
        return files
    }
}
