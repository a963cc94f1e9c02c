import Foundation
import GalleyTestSupport
import Testing

/// A reader that goes away (`galley search … | head -3`) ends galley as it ends any Unix tool:
/// by SIGPIPE, exit status 141, nothing on standard error; never a crash. The signal is also
/// ignored here, as swift-nio ignores it for the whole process once a PostgreSQL store or a
/// server starts: the write then fails with EPIPE, which Foundation's FileHandle.write trapped
/// on (exit 132 and a backtrace).
@Suite struct ClosedPipeTests {
    /// galley's exit status and standard error when its standard output has no reader left by
    /// the time it writes (the reader, `true`, has exited half a second before).
    static func closedPipe(_ arguments: [String], ignoringSIGPIPE: Bool) throws -> (status: String, stderr: String) {
        let work = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let quoted = ([Harness.galley.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let script = (ignoringSIGPIPE ? "trap '' PIPE; " : "")
            + "{ sleep 0.5; \(quoted) 2>\"\(work.path)/stderr\"; } | true; echo \"${PIPESTATUS[0]}\""
        let result = try Harness.run(URL(fileURLWithPath: "/bin/bash"), ["-c", script], in: work)
        let stderr = (try? String(contentsOf: work.appending(path: "stderr"), encoding: .utf8)) ?? ""
        return (result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), stderr)
    }

    static func exampleStore() throws -> String {
        let store = try Harness.temporaryDirectory().appending(path: "store").path
        let zip = Harness.fixtures.appending(path: "zips/example-valid.zip").path
        #expect(try Harness.galley(["import", zip, "--store", store, "-q"]).status == 0)
        return store
    }

    @Test(arguments: [false, true]) func queriesEndQuietlyOnAClosedPipe(ignoringSIGPIPE: Bool) throws {
        let store = try Self.exampleStore()
        for arguments in [["issues"], ["assets"], ["assets", "--json"], ["search", "title"], ["articles", "--json"], ["issues", "--help"]] {
            let (status, stderr) = try Self.closedPipe(arguments + ["--store", store], ignoringSIGPIPE: ignoringSIGPIPE)
            #expect(status == "141", "\(arguments): exit \(status), \(stderr.prefix(300))")
            #expect(stderr.isEmpty, "\(arguments): \(stderr.prefix(300))")
        }
    }

    @Test(.enabled(if: PostgresTestServer.enabled, "needs GALLEY_TEST_POSTGRES")) func aPostgresStoresQueriesEndQuietlyOnAClosedPipe() throws {
        let store = try PostgresTestServer.newStore()
        let zip = Harness.fixtures.appending(path: "zips/example-valid.zip").path
        #expect(try Harness.galley(["import", zip, "--store", store, "-q"]).status == 0)
        for arguments in [["assets"], ["search", "title"], ["issues", "--json"]] {
            let (status, stderr) = try Self.closedPipe(arguments + ["--store", store], ignoringSIGPIPE: false)
            #expect(status == "141", "\(arguments): exit \(status), \(stderr.prefix(300))")
            #expect(stderr.isEmpty, "\(arguments): \(stderr.prefix(300))")
        }
    }
}
