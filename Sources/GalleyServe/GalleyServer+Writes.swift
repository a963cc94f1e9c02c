import Foundation
import GalleyCore
import GalleyFormats
import GalleyKit
import GalleyStore
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix

/// Who may write, and how much: a bearer token (writes are off without one) and the largest
/// upload taken.
public struct WriteAccess: Sendable {
    /// SHA-256 of the token: compared digest to digest, in constant time.
    let tokenDigest: [UInt8]
    public let maxUpload: Int64

    /// Writes with `token` (nil or empty: writes off).
    public init?(token: String?, maxUpload: Int64) {
        guard let token = token?.trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty else { return nil }
        tokenDigest = Array(SHA256Hasher.hex(of: token).utf8)
        self.maxUpload = maxUpload
    }

    /// Whether `Authorization` carries the token. Both sides are hashed first, so the
    /// comparison takes the same time whatever the guess and its length.
    func admits(_ authorization: String?) -> Bool {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { return false }
        let offered = Array(SHA256Hasher.hex(of: String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)).utf8)
        guard offered.count == tokenDigest.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(offered, tokenDigest) { difference |= a ^ b }
        return difference == 0
    }
}

extension GalleyServer {
    /// The token check every write passes first; returns what writes may do.
    @discardableResult
    func authorize(_ request: Request) throws -> WriteAccess {
        guard let writes else {
            throw GalleyError("this server takes no writes", id: .writesOff,
                              hint: "Its operator turns uploads and deletions on by starting it with a token (docs/serve.md, Writes).")
        }
        guard writes.admits(request.headers[.authorization]) else {
            throw GalleyError("a write needs the server's bearer token", id: .authRequired,
                              hint: "Send Authorization: Bearer TOKEN (the token the server was started with).")
        }
        return writes
    }

    /// `POST /issues`: the body is an issue zip. It is streamed to a temporary file (never
    /// held in memory; over `maxUpload` is 413 as soon as it is known), then passes the same
    /// gate and atomic import as `galley import` on a worker thread. 201 for a new issue, 200
    /// for a replaced or unchanged one, 422 with the findings for a refused zip (the store
    /// untouched). `?force=true` replaces an issue whatever its version.
    func upload(_ request: Request, _ context: ServeContext) async -> Response {
        do {
            let writes = try authorize(request)
            let force = try Self.flag(request, "force")  // before the body is read
            let tooLarge = GalleyError("the upload is over the limit of \(writes.maxUpload) bytes", id: .uploadTooLarge,
                                       hint: "Import it on the server itself, or ask its operator to raise the limit (docs/serve.md, Writes).")
            if let length = request.headers[.contentLength].flatMap({ Int64($0) }), length > writes.maxUpload { throw tooLarge }
            let folder = uploadsFolder.appending(path: "galley-upload-\(UUID().uuidString)")
            // Twice: another upload ending may remove the emptied uploads/ between the two mkdirs.
            if (try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)) == nil {
                do {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                } catch {
                    throw GalleyError("cannot make a folder for the upload: \(error.localizedDescription)", id: .storeFailed, path: folder.path,
                                      hint: "Check the store's permissions and free space.")
                }
            }
            defer {
                try? FileManager.default.removeItem(at: folder)
                // Gone when empty: the store's folder is left as the upload found it.
                rmdir(uploadsFolder.path)
            }
            // Held while the upload lives: a folder whose lock can be taken belongs to a dead
            // server (`removeDeadUploads`).
            let held = try StoreLock(folder.appending(path: ".lock"))
            guard held.tryLock() else { throw GalleyError("the upload's new folder is locked", id: .storeFailed, path: folder.path) }
            defer { held.unlock() }
            let path = folder.appending(path: "upload.zip").path
            let counter = ByteCounter(limit: writes.maxUpload)
            do {
                try await FileIO().writeFile(contents: request.body.map { buffer -> ByteBuffer in
                    guard counter.add(buffer.readableBytes) else { throw tooLarge }
                    return buffer
                }, path: path, context: context)
            } catch {
                // FileIO wraps what the body sequence throws: the counter says whether it was the limit.
                if counter.isOver { throw tooLarge }
                throw GalleyError("the upload broke off: \(error)", id: .usage, hint: "Send the whole zip as the request body.")
            }
            let store = self.store
            let result: ImportResult
            do {
                result = try await NIOThreadPool.singleton.runIfActive {
                    var result = try store.importZip(ImportJob.open(path).forcing(force))
                    result.path = "upload"
                    result.warnings = Self.asUploaded(result.warnings, from: path)
                    return result
                }
            } catch let refused as DiagnosticsError {
                throw DiagnosticsError(Self.asUploaded(refused.diagnostics, from: path))
            }
            var response = document(result, status: result.status == .imported ? .created : .ok)
            response.headers[.location] = "/issues/\(HTMLText.urlPath(result.appleID))"
            return response
        } catch {
            return failure(error, version: nil)
        }
    }

    /// `DELETE /issues/{id}`: removes the issue (rows, files, kept zip); answers what was
    /// removed.
    func remove(_ request: Request, _ context: ServeContext) async -> Response {
        do {
            try authorize(request)
            let id = try context.parameters.require("id")
            let store = self.store
            let removed = try await NIOThreadPool.singleton.runIfActive { try store.delete(id) }
            return document(["deleted": removed], status: .ok)
        } catch {
            return failure(error, version: nil)
        }
    }

    /// A write's JSON answer: never cached, in the current version.
    func document(_ value: some Encodable, status: HTTPResponse.Status) -> Response {
        var headers = Self.headers(.current)
        headers[.contentType] = Self.json
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: JSONDocument.encode(value))))
    }
}

/// Bytes seen so far of one upload, against its limit.
final class ByteCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var total: Int64 = 0
    let limit: Int64

    init(limit: Int64) { self.limit = limit }

    var isOver: Bool {
        lock.lock()
        defer { lock.unlock() }
        return total > limit
    }

    /// Adds `count`; false once the total is over the limit.
    func add(_ count: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        total += Int64(count)
        return total <= limit
    }
}

extension GalleyServer {
    /// Findings about an uploaded zip as its sender can use them: located at `upload`, not at
    /// the server's temporary file, and without `zip.file-name` (the file name is the server's,
    /// not the sender's).
    static func asUploaded(_ diagnostics: [Diagnostic], from path: String) -> [Diagnostic] {
        diagnostics.compactMap { finding in
            guard finding.id != Check.zipFileName.id else { return nil }
            var shown = finding
            // An upload is forced by its query, not by an option.
            switch finding.id {
            case Check.importOlder.id: shown.hint = "Upload it with ?force=true to replace it anyway."
            case Check.importSameVersionChanged.id:
                shown.hint = "Bump last_updated in the issue's source so that apps see a new version; ?force=true replaces it without one."
            default: break
            }
            if var location = shown.location, location.path == path || location.path.hasPrefix(path) {
                location.path = "upload" + location.path.dropFirst(path.count)
                shown.location = location
            }
            return shown
        }
    }
}

extension GalleyServer {
    /// Where uploads are spooled: `uploads/` in the store's folder (for a PostgreSQL store, its
    /// blob folder), on the disk the import moves them within, and where a restart finds what
    /// a killed server left.
    var uploadsFolder: URL { store.root.appending(path: "uploads") }

    /// Removes the upload folders of servers that died mid-upload (SIGKILL, a crash, a power
    /// cut): each live upload holds the lock in its folder, so a folder whose lock can be taken
    /// is nobody's. Safe beside other servers sharing the store. Returns how many went.
    @discardableResult
    public func removeDeadUploads() -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: uploadsFolder.path) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix("galley-upload-") {
            let folder = uploadsFolder.appending(path: name)
            guard let lock = try? StoreLock(folder.appending(path: ".lock")), lock.tryLock() else { continue }
            if (try? FileManager.default.removeItem(at: folder)) != nil { removed += 1 }
            lock.unlock()
        }
        return removed
    }
}
