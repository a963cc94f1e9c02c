import Foundation
import GalleyCore
import GalleyKit

/// The content pass every backend's import runs once the gate has passed and the versions say
/// go: every file inflated into `staging/<token>/`, hashed and checked as it passes, while a
/// second thread keeps a copy of the zip (`staging/<token>.zip`) for the package feed. Neither
/// touches the database, the issues' files or the kept zips: a zip the pass refuses leaves the
/// store as it was, and this removes what it staged before it throws.
struct ImportPass {
    /// Names this import's staging: `<pid>-<random>`.
    let token: String
    /// The inflated files (an import moves them on, or `cleanUp` removes them).
    let staging: URL
    /// The pass's warnings (its errors refused the zip).
    let warnings: [Diagnostic]
    /// The kept zip in staging, with its SHA-256 and size.
    let kept: (staged: URL, digest: FileDigest)
    /// Every file written, with its size and SHA-256.
    let files: [SQLiteStore.ExtractedFile]

    static func run(
        _ path: String, _ passed: ImportGate.Passed, stagingFolder: URL, root: URL, progress: ((Int64, Int64) -> Void)?
    ) throws -> ImportPass {
        let token = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let staging = stagingFolder.appending(path: token)
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        var succeeded = false
        defer { if !succeeded { try? FileManager.default.removeItem(at: staging) } }
        let sink = try SQLiteStore.ExtractingSink(root: staging, total: passed.declaredBytes, progress: progress)
        let (pass, keeping) = alongside({ try SQLiteStore.stagePackage(path, token: token, stagingFolder: stagingFolder, root: root) }) {
            try SQLiteStore.refusingErrors(passed.check.checkContent(sink: sink))
        }
        do {
            let warnings = try pass.get()
            let kept = try keeping.get()
            succeeded = true
            return ImportPass(token: token, staging: staging, warnings: warnings, kept: kept, files: sink.files())
        } catch {
            if case .success(let kept) = keeping { try? FileManager.default.removeItem(at: kept.staged) }
            throw error
        }
    }

    /// Removes what is still staged (nothing once an import moved it all on).
    func cleanUp() {
        try? FileManager.default.removeItem(at: staging)
        try? FileManager.default.removeItem(at: kept.staged)
    }
}
