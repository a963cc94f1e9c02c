import Foundation
import GalleyTestSupport
import Testing

/// A PostgreSQL server that dies, stops answering or crashes under an import. Each test runs
/// a cluster of its own (`scripts/pg-test-server.sh start DIR --crash-test`: files durable,
/// commits acknowledged before they are, as a server with `synchronous_commit=off` runs) to
/// kill, and every import is bounded in time.
@Suite(.serialized, .enabled(if: PostgresTestServer.enabled, "needs PostgreSQL's server (make test installs it)"))
struct PostgresCrashTests {
    static let newer = Harness.fixtures.appending(path: "zips/example-valid.zip").path
    static let older = Harness.fixtures.appending(path: "versions/example-valid.zip").path

    /// A cluster in a folder of its own, on one port for its whole life (restarts included).
    final class Cluster {
        let folder: URL
        let address: String
        static let script = Harness.root.appending(path: "scripts/pg-test-server.sh").path

        init() throws {
            // Not under the tests' scratch folder: the server runs as the postgres user when
            // the tests run as root, and must reach its folder (mktemp's parents are 0700).
            folder = URL(fileURLWithPath: NSTemporaryDirectory()).appending(path: "galley-pg-crash-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            address = try Self.script("start", folder.appending(path: "cluster").path, "--crash-test")
        }

        deinit {
            _ = try? Self.script("stop", folder.appending(path: "cluster").path)
            try? FileManager.default.removeItem(at: folder)
        }

        /// Runs the script with posix_spawn and waitpid: Foundation's `Process` never saw it
        /// end (the server it leaves running is spawned through runuser and pg_ctl), and
        /// `waitUntilExit` hung with the script already gone.
        @discardableResult
        static func script(_ arguments: String...) throws -> String {
            let output = URL(fileURLWithPath: NSTemporaryDirectory()).appending(path: "galley-pg-script-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: output) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            let argv = ["/bin/bash", script] + arguments
            var cArguments = argv.map { strdup($0) } + [nil]
            defer { for pointer in cArguments { free(pointer) } }
            var pid: pid_t = 0
            guard posix_spawn(&pid, "/bin/bash", &actions, nil, &cArguments, environ) == 0 else {
                throw GalleyTestError("cannot start pg-test-server.sh")
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            guard status == 0 else { throw GalleyTestError("pg-test-server.sh \(arguments): \(text)") }
            return text.split(separator: "\n").last.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
        }

        func start() throws { try Self.script("start", folder.appending(path: "cluster").path, "--crash-test") }
        /// An immediate stop: what was not yet durable is lost, as in a crash.
        func crash() throws { try Self.script("crash", folder.appending(path: "cluster").path) }

        /// Every process of the server: the postmaster (first line of postmaster.pid) and its children.
        func processes() throws -> [pid_t] {
            let pidFile = folder.appending(path: "cluster/data/postmaster.pid")
            guard let first = try String(contentsOf: pidFile, encoding: .utf8).split(separator: "\n").first,
                  let postmaster = pid_t(first) else { throw GalleyTestError("no postmaster.pid") }
            let children = try Harness.tool("pgrep", ["-P", String(postmaster)]).stdout.split(separator: "\n").compactMap { pid_t($0) }
            return [postmaster] + children
        }

        /// A store on this cluster with a database and blob folder of its own.
        func store(options: String = "") throws -> String {
            let name = "crash_\(getpid())_\(UUID().uuidString.prefix(8).lowercased())"
            try PostgresTestServer.psql(address, "CREATE DATABASE \(name)")
            let blobs = folder.appending(path: "blobs-\(name)").path
            guard var parts = URLComponents(string: address) else { throw GalleyTestError("not an address: \(address)") }
            parts.path = "/\(name)"
            return (parts.string ?? address) + "?blobs=\(blobs)" + options
        }
    }

    /// The example with a 60 MB picture, so an import takes long enough to be cut.
    func largeExample() throws -> String {
        let source = try Harness.copy(Harness.example)
        var bytes = [UInt8](repeating: 0, count: 60_000_000)
        bytes.replaceSubrange(0..<4, with: [0xFF, 0xD8, 0xFF, 0xE0])
        for i in stride(from: 4, to: bytes.count, by: 4096) { bytes[i] = UInt8(truncatingIfNeeded: i &* 31) }
        try Data(bytes).write(to: source.appending(path: "cover.jpg"))
        let out = try Harness.temporaryDirectory()
        #expect(try Harness.galley(["pack", source.path, "-o", out.path + "/", "-q"]).status == 0)
        return out.appending(path: "com.example.harbour.2026-01.zip").path
    }

    /// `galley import` in the background, and what it said once it ended.
    func importing(_ zip: String, into store: String) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = Harness.galley
        process.arguments = ["import", zip, "--store", store, "--force"]
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        return (process, errors)
    }

    /// Waits at most `seconds` for `process`; kills it (and says so) past that.
    func ends(_ process: Process, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return false
        }
        return true
    }

    /// The server killed (SIGKILL, every process) while an import runs: the import ends with
    /// an error in words (it hung for ever: a statement sent on the closed connection was never
    /// answered), and once the server is back the store holds one whole version.
    @Test func anImportEndsWhenTheDatabaseIsKilled() throws {
        let cluster = try Cluster()
        let store = try cluster.store()
        #expect(try Harness.galley(["import", Self.newer, "--store", store, "-q"]).status == 0)
        let large = try largeExample()
        for delay in [0.2, 0.8] {
            let (process, errors) = try importing(large, into: store)
            Thread.sleep(forTimeInterval: delay)
            let pids = try cluster.processes()
            for pid in pids { kill(pid, SIGKILL) }
            #expect(ends(process, within: 60), "the import ended after the server was killed at \(delay) s")
            let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            if process.terminationStatus != 0 {
                #expect(process.terminationStatus == 2, "\(said)")
                #expect(said.contains("PostgreSQL"), "\(said)")
            }
            // The server starts again once every process of the killed one is gone.
            let deadline = Date().addingTimeInterval(20)
            while pids.contains(where: { kill($0, 0) == 0 }) && Date() < deadline { usleep(50_000) }
            try cluster.start()
            let check = try Harness.galley(["store", "check", "--store", store, "-q"])
            #expect(check.status == 0, "after a kill at \(delay) s: \(check.stdout)\(check.stderr)")
        }
    }

    /// A server that stops answering (every process stopped: the kernel still accepts
    /// connections, nothing answers them) ends an import and a query after the address's
    /// `timeout`, in words, instead of never; the store is as the database has it.
    @Test func commandsEndWhenTheDatabaseStopsAnswering() throws {
        let cluster = try Cluster()
        let store = try cluster.store(options: "&timeout=3")
        #expect(try Harness.galley(["import", Self.older, "--store", store, "-q"]).status == 0)
        let pids = try cluster.processes()
        for pid in pids { kill(pid, SIGSTOP) }
        let (importing, errors) = try importing(Self.newer, into: store)
        let ended = ends(importing, within: 30)
        let query = try Harness.galley(["issues", "--store", store])
        for pid in pids { kill(pid, SIGCONT) }
        #expect(ended, "the import ended while the server answered nothing")
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(importing.terminationStatus == 2, "\(said)")
        #expect(said.contains("did not answer within 3 s") && said.contains("timeout=SECONDS"), "\(said)")
        #expect(query.status == 2 && query.stderr.contains("did not answer within 3 s"), "\(query.stderr)")
        let check = try Harness.galley(["store", "check", "--store", store, "-q"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let shown = try Harness.galley(["issue", "show", "example-valid", "--store", store])
        #expect(shown.stdout.contains("updated 2020-02-01"), "the old version is what the database has: \(shown.stdout)")
        let refused = try Harness.galley(["issues", "--store", "\(store.prefix { $0 != "?" })?blobs=x&timeout=0"])
        #expect(refused.status == 2 && refused.stderr.contains("timeout=0"), "\(refused.stderr)")
    }

    /// A crash right after an import replaced an issue, on a server whose commits are
    /// acknowledged before they are durable (`synchronous_commit=off`): Galley's own sessions
    /// wait for durability, so the new version survives and no row names a blob it removed
    /// (before, the old rows came back pointing at removed files).
    @Test func aCrashAfterAnImportLosesNothingOnAServerWithAsynchronousCommits() throws {
        let cluster = try Cluster()
        let store = try cluster.store()
        #expect(try PostgresTestServer.psqlValue(store: store, "SHOW synchronous_commit") == "off", "the server's own setting")
        #expect(try Harness.galley(["import", Self.older, "--store", store, "-q"]).status == 0)
        // The first version made durable, whatever the sessions did.
        _ = try PostgresTestServer.psqlValue(store: store, "CHECKPOINT")
        #expect(try Harness.galley(["import", Self.newer, "--store", store, "-q"]).status == 0)
        try cluster.crash()
        try cluster.start()
        let check = try Harness.galley(["store", "check", "--store", store])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let shown = try Harness.galley(["issue", "show", "example-valid", "--store", store])
        #expect(shown.stdout.contains("updated 2020-03-01"), "the newer version survived: \(shown.stdout)")
    }
}
