import DequeModule
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1

/// The JSON and HTML answers already made for the store's current revision, so a listing asked
/// again (what apps do most) costs one revision read and a dictionary lookup instead of a query
/// and an encoding. Equal revisions mean equal answers (`IssueStore.revision`), so an entry is
/// good exactly as long as the revision it was made at is the store's; the first request that
/// sees a newer revision empties the cache.
///
/// Bounded: at most `capacity` bytes of bodies (an answer larger than an eighth of it is never
/// kept), the oldest entries leaving first.
final class ResponseCache: @unchecked Sendable {
    /// One answer: everything of the response but what middleware adds per request.
    struct Entry {
        let tag: String
        let headers: HTTPFields
        let body: ByteBuffer
        /// The 200's headers in NIO's model with `Content-Length`, without Date and Server
        /// (`RevalidationHandler` answers with them).
        let responseHeaders: HTTPHeaders

        init(tag: String, headers: HTTPFields, body: ByteBuffer) {
            (self.tag, self.headers, self.body) = (tag, headers, body)
            responseHeaders = HTTPValidator.converted(headers, contentLength: body.readableBytes)
        }
    }

    let capacity: Int
    private let lock = NSLock()
    private var revision: Int64 = .min
    private var entries: [String: Entry] = [:]
    /// Keys, oldest first.
    private var order: Deque<String> = []
    private var bytes = 0
    /// The tags `resource` gave at `revision`, by the request's raw inputs (`Revalidator.key`):
    /// what a revalidation is answered from before it reaches the router.
    private var validators: [String: HTTPValidator] = [:]
    /// At most this many validators are kept: past it, the table starts again empty.
    static let validatorLimit = 16_384

    init(capacity: Int = 8 * 1024 * 1024) {
        self.capacity = capacity
    }

    /// The largest answer kept (bytes of body and key): an eighth of the capacity. A larger
    /// answer is not held in memory at all (`AnswerSpool`).
    var largestKept: Int { capacity / 8 }

    /// The answer kept for `key` at `revision`, if any.
    func entry(_ key: String, revision: Int64) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        guard revision == self.revision else { return nil }
        return entries[key]
    }

    /// Keeps an answer made at `revision` (unless a newer revision was seen meanwhile, or the
    /// answer is too large to be worth its room).
    func store(_ entry: Entry, for key: String, revision: Int64) {
        let size = entry.body.readableBytes + key.utf8.count
        guard size <= largestKept else { return }
        lock.lock()
        defer { lock.unlock() }
        if revision > self.revision {
            advance(to: revision)
        } else if revision < self.revision || entries[key] != nil {
            return
        }
        while bytes + size > capacity, let oldest = order.popFirst() {
            if let old = entries.removeValue(forKey: oldest) { bytes -= old.body.readableBytes + oldest.utf8.count }
        }
        entries[key] = entry
        order.append(key)
        bytes += size
    }

    /// Empties the cache for a newer revision. Behind `lock`.
    private func advance(to revision: Int64) {
        self.revision = revision
        entries.removeAll(keepingCapacity: true)
        order.removeAll(keepingCapacity: true)
        validators.removeAll(keepingCapacity: true)
        bytes = 0
    }

    /// The validator kept for a request's raw inputs at `revision`, if any.
    func validator(_ key: String, revision: Int64) -> HTTPValidator? {
        lock.lock()
        defer { lock.unlock() }
        guard revision == self.revision else { return nil }
        return validators[key]
    }

    /// Keeps what `resource` decided for a request's raw inputs (unless the store has moved on).
    func keep(_ validator: HTTPValidator, for key: String) {
        lock.lock()
        defer { lock.unlock() }
        if validator.revision > revision {
            advance(to: validator.revision)
        } else if validator.revision < revision {
            return
        }
        if validators.count >= Self.validatorLimit { validators.removeAll(keepingCapacity: true) }
        validators[key] = validator
    }

    /// Bytes of bodies kept (for tests).
    var size: Int {
        lock.lock()
        defer { lock.unlock() }
        return bytes
    }
}
