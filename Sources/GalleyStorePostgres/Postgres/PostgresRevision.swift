import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The store's revision without a query per request: one connection LISTENs on
/// `galley_revision`, which every commit that changes issues or independent articles NOTIFYs
/// with the new value (PostgresSchema's trigger), from any instance. So several `serve`
/// instances on one database change their ETags and drop their kept answers as soon as one of
/// them (or a CLI import) commits, well within a second.
///
/// Started on the first `revision()` (a CLI query never asks, so never pays for it). While the
/// listening connection is down, or before it is up, every call reads the table, as without it.
final class PostgresRevision: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64?
    private var listening: PostgresConnection?
    private var started = false

    deinit { stop() }

    /// The revision: the value last notified, or `read()`'s.
    func current(connections: PostgresConnections, read: () throws -> Int64) throws -> Int64 {
        lock.lock()
        let known = value
        let start = !started
        started = true
        lock.unlock()
        if let known { return known }
        if start { listen(connections) }
        let read = try read()
        lock.lock()
        defer { lock.unlock() }
        // Known only while listening: a value set after LISTEN was in place.
        if listening != nil { value = max(value ?? read, read) }
        return read
    }

    /// The value notifications keep, if any (nil: the next call reads the table).
    var cached: Int64? {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    /// Forgets the value (this process just committed: the notification may still be on its way).
    func invalidate() {
        lock.lock()
        value = nil
        lock.unlock()
    }

    private func listen(_ connections: PostgresConnections) {
        guard let connection = try? connections.dedicated() else { return }
        connection.addListener(channel: PostgresSchema.revisionChannel) { [weak self] _, notification in
            guard let self, let revision = Int64(notification.payload) else { return }
            self.lock.lock()
            if self.listening != nil { self.value = max(self.value ?? revision, revision) }
            self.lock.unlock()
        }
        // LISTEN is sent ahead of this query on the same connection: once it answers, no
        // notification can be missed, and the value read next is known.
        guard (try? connection.run("SELECT 1", connections.logger)) != nil else {
            try? connection.close().wait()
            return
        }
        lock.lock()
        listening = connection
        lock.unlock()
        connection.closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            self.lock.lock()
            self.listening = nil
            self.value = nil
            self.started = false  // the next call listens again
            self.lock.unlock()
        }
    }

    func stop() {
        lock.lock()
        let connection = listening
        listening = nil
        value = nil
        lock.unlock()
        try? connection?.close().wait()
    }
}
