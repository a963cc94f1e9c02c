import Foundation

/// Scratch folders for the tests. Every folder a test makes lives under one folder per test
/// process, `$TMPDIR/galley-tests-<pid>`, which is removed when that process exits; the folder of
/// a run that died (killed, crashed) is removed by the next run. So a test need not clean up
/// after itself, and a test run leaves nothing behind: runs used to leave about 0.5 GB each in
/// /tmp, enough to fill a small disk over a few runs.
public enum Scratch {
    /// A new, empty folder named `prefix-<uuid>`.
    public static func folder(_ prefix: String = "galley-test") throws -> URL {
        let url = root.appending(path: "\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A path for a new file or folder named `prefix-<uuid><suffix>`, not created.
    public static func path(_ prefix: String, suffix: String = "") -> URL {
        root.appending(path: "\(prefix)-\(UUID().uuidString)\(suffix)")
    }

    static let namePrefix = "galley-tests-"

    /// This process's folder, made on first use; older runs' folders go then.
    static let root: URL = {
        let temporary = FileManager.default.temporaryDirectory
        removeFoldersOfEndedRuns(in: temporary)
        let url = temporary.appending(path: "\(namePrefix)\(getpid())")
        try? FileManager.default.removeItem(at: url)  // a dead run's, with this pid
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit {
            let url = FileManager.default.temporaryDirectory.appending(path: "\(Scratch.namePrefix)\(getpid())")
            try? FileManager.default.removeItem(at: url)
        }
        return url
    }()

    /// Removes `galley-tests-<pid>` folders whose process is gone.
    static func removeFoldersOfEndedRuns(in temporary: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        for name in names where name.hasPrefix(namePrefix) {
            guard let pid = Int32(name.dropFirst(namePrefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) != 0, errno == ESRCH {
                try? FileManager.default.removeItem(at: temporary.appending(path: name))
            }
        }
    }
}
