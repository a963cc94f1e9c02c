import Foundation
import GalleyCore
import GalleyStore
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// A few PostgreSQL connections for the store's synchronous API (`IssueStore`): each call checks
/// one out, runs its statements and gives it back; `dedicated()` opens one of its own for work
/// that holds a session lock (imports, deletions) and is closed after.
///
/// postgres-nio is asynchronous; the store's callers (the CLI, `serve`'s handlers through the
/// same protocol as SQLite's) are not, so each statement waits for its future on the calling
/// thread, never on the connections' own event loop. Hand-written because postgres-nio's
/// `PostgresClient` pool is run as a service inside a task, which a synchronous caller cannot
/// host; this keeps it to a lock, a list and a limit.
final class PostgresConnections: @unchecked Sendable {
    let address: PostgresAddress
    /// What every statement is sent with: the logger and how long its answer is waited for.
    let logger: PostgresCalls
    private let group: MultiThreadedEventLoopGroup
    private let configuration: PostgresConnection.Configuration
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var nextID = 0
    private var closed = false
    private let limit: Int

    init(_ address: PostgresAddress, limit: Int = 4, statements: (@Sendable (PostgresQuery) -> Void)? = nil) {
        self.address = address
        self.limit = limit
        var logger = Logger(label: "galley.postgres")
        logger.logLevel = .critical
        self.logger = PostgresCalls(logger: logger, timeout: .seconds(Int64(address.timeout)), statements: statements)
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = PostgresConnection.Configuration(
            host: address.host, port: address.port, username: address.user, password: address.password,
            database: address.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        // Galley removes a superseded issue's blobs once its commit returns: a commit that a
        // server crash could still lose (`synchronous_commit=off` on the server) would leave
        // rows naming removed files. Its own sessions always wait for the commit to be durable.
        configuration.options.additionalStartupParameters = [("synchronous_commit", "on"), ("application_name", "galley")]
        self.configuration = configuration
    }

    deinit { close() }

    /// Closes every idle connection and the event loop. Connections still checked out are
    /// closed as they come back.
    func close() {
        condition.lock()
        let wasClosed = closed
        closed = true
        let connections = idle
        idle = []
        condition.unlock()
        guard !wasClosed else { return }
        for connection in connections { try? connection.close().wait() }
        try? group.syncShutdownGracefully()
    }

    /// A new connection of its own; the caller closes it.
    func dedicated() throws -> PostgresConnection {
        condition.lock()
        nextID += 1
        let id = nextID
        condition.unlock()
        do {
            // Within the timeout too: a stopped server accepts the connection (the kernel does)
            // and never answers its startup message.
            let connecting = PostgresConnection.connect(on: group.next(), configuration: configuration, id: id, logger: logger.logger)
            return try logger.wait(connecting) { connecting.whenSuccess { _ = $0.close() as EventLoopFuture<Void> } }
        } catch {
            throw failure("cannot connect to PostgreSQL", error)
        }
    }

    /// Runs `body` on a pooled connection (at most `limit` open; callers past that wait).
    func with<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    private func checkOut() throws -> PostgresConnection {
        condition.lock()
        while idle.isEmpty && open >= limit { condition.wait() }
        if let connection = idle.popLast() {
            condition.unlock()
            if !connection.isClosed { return connection }
            condition.lock()
            open -= 1
            condition.unlock()
            return try checkOut()
        }
        open += 1
        condition.unlock()
        do {
            return try dedicated()
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ connection: PostgresConnection) {
        condition.lock()
        if closed || connection.isClosed {
            open -= 1
            condition.signal()
            condition.unlock()
            try? connection.close().wait()
            return
        }
        idle.append(connection)
        condition.signal()
        condition.unlock()
    }

    /// A failure of the database in words: the server's own message, or why it was not reached.
    func failure(_ what: String, _ error: any Error) -> GalleyError {
        if let error = error as? GalleyError { return error }
        if error is PostgresConnectionLost {
            return GalleyError("\(what): the connection to PostgreSQL at \(address.host):\(address.port) was lost", id: .storeFailed,
                               path: address.display,
                               hint: "The server stopped or was restarted; the store is as the database has it. Run the command again once it is up (pg_isready -h \(address.host) -p \(address.port)).")
        }
        if let timeout = error as? PostgresTimeout {
            return GalleyError("\(what): PostgreSQL at \(address.host):\(address.port) did not answer within \(timeout.seconds) s",
                               id: .storeFailed, path: address.display,
                               hint: "Check that the server is up and not stuck (pg_isready -h \(address.host) -p \(address.port), its log); "
                                   + "the store is as the database has it. A slow server takes a longer ?timeout=SECONDS in the address.")
        }
        if let psql = error as? PSQLError {
            if let message = psql.serverInfo?[.message] {
                let state = psql.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                return GalleyError("\(what): \(message)\(state)", id: .storeFailed, path: address.display,
                                   hint: "Check the address, the user's rights on the database, and the server's log.")
            }
            let reason = psql.underlying.map { "\($0)" } ?? "\(psql.code)"
            return GalleyError("\(what) at \(address.host):\(address.port): \(reason)", id: .storeFailed, path: address.display,
                               hint: "Check that PostgreSQL is running and reachable there (pg_isready -h \(address.host) -p \(address.port)).")
        }
        return GalleyError("\(what): \(error)", id: .storeFailed, path: address.display,
                           hint: "Check that PostgreSQL is running and reachable at \(address.host):\(address.port).")
    }
}

/// What each statement is sent with: the logger, and how long its answer is waited for.
struct PostgresCalls: Sendable {
    var logger: Logger
    var timeout: TimeAmount
    /// Told every statement before it is sent (the plan tests explain each one).
    var statements: (@Sendable (PostgresQuery) -> Void)?

    /// `future`'s value, or `PostgresTimeout` once `timeout` passed without one (`abandon`
    /// then closes what it was waiting on): a server that stopped answering while connected
    /// (stopped, or stuck with its postmaster gone) ends the command instead of never.
    func wait<T: Sendable>(_ future: EventLoopFuture<T>, abandon: () -> Void) throws -> T {
        let promise = future.eventLoop.makePromise(of: T.self)
        future.cascade(to: promise)
        let seconds = timeout.nanoseconds / 1_000_000_000
        let timer = future.eventLoop.scheduleTask(in: timeout) { promise.fail(PostgresTimeout(seconds: seconds)) }
        defer { timer.cancel() }
        do {
            return try promise.futureResult.wait()
        } catch let timedOut as PostgresTimeout {
            abandon()
            throw timedOut
        }
    }
}

/// The server closed the connection (it stopped, or was killed) before a statement was sent.
struct PostgresConnectionLost: Error {}

/// No answer from the database within the address's `timeout`.
struct PostgresTimeout: Error {
    var seconds: Int64
}

extension PostgresConnection {
    /// Every row of `query`, waited for on this thread.
    func rows(_ query: PostgresQuery, _ calls: PostgresCalls) throws -> [PostgresRandomAccessRow] {
        calls.statements?(query)
        return try waited(self.query(query, logger: calls.logger), calls).rows.map { $0.makeRandomAccess() }
    }

    /// Runs a statement whose rows do not matter.
    func run(_ query: PostgresQuery, _ calls: PostgresCalls) throws {
        calls.statements?(query)
        _ = try waited(self.query(query, logger: calls.logger), calls)
    }

    /// The statement's answer, within the address's timeout (`PostgresCalls.wait`). A
    /// statement is not sent on a connection the server closed: postgres-nio never answers
    /// it, which kept an import whose server was killed waiting for ever.
    private func waited<T: Sendable>(_ future: @autoclosure () -> EventLoopFuture<T>, _ calls: PostgresCalls) throws -> T {
        guard !isClosed else { throw PostgresConnectionLost() }
        return try calls.wait(future()) { _ = self.close() as EventLoopFuture<Void> }
    }

    /// Takes a session advisory lock, waiting for its holder (another import, on any machine)
    /// as long as it takes: polled, so that each statement stays within the timeout while a
    /// long import elsewhere holds it.
    func advisoryLock(_ key: Int64, _ calls: PostgresCalls) throws {
        while true {
            let got = try rows("SELECT pg_try_advisory_lock(\(key)) AS got", calls)
            if try got.first?.bool("got") == true { return }
            usleep(100_000)
        }
    }
}

extension PostgresRandomAccessRow {
    func string(_ column: String) throws -> String { try self[column].decode(String.self) }
    func optionalString(_ column: String) throws -> String? { try self[column].decode(String?.self) }
    func int(_ column: String) throws -> Int64 { try self[column].decode(Int64.self) }
    func optionalInt(_ column: String) throws -> Int64? { try self[column].decode(Int64?.self) }
    func bool(_ column: String) throws -> Bool { try self[column].decode(Bool.self) }
}
