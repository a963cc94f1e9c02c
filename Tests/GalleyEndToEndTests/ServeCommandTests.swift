import Foundation
import Testing

/// `galley serve` as operators run it: the built binary on a loopback port of its choosing,
/// answering HTTP, then stopped by SIGTERM.
@Suite struct ServeCommandTests {
    @Test func theBinaryServesTheStoreOnLoopbackAndStopsOnSIGTERM() throws {
        let work = try Harness.temporaryDirectory()
        let store = work.appending(path: "store")
        #expect(try Harness.galley(["pack", Harness.example.path, "-o", work.path + "/", "-q"]).status == 0)
        #expect(try Harness.galley(["import", work.appending(path: "com.example.harbour.2026-01.zip").path,
                                    "--store", store.path, "-q"]).status == 0)
        let process = Process()
        process.executableURL = Harness.galley
        process.arguments = ["serve", "--store", store.path, "--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        // The first line says where it listens.
        var line = Data()
        let deadline = Date().addingTimeInterval(20)
        while !line.contains(10), Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        let port = try #require(text.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) },
                                "\(text)")
        let fetch = """
            import json, sys, urllib.request
            with urllib.request.urlopen(sys.argv[1]) as r:
                print(r.status, r.headers["Content-Version"], json.load(r)["items"][0]["apple_id"])
            """
        let answer = try Harness.tool("python3", ["-c", fetch, "http://127.0.0.1:\(port)/issues"])
        #expect(answer.stdout == "200 2.0 com.example.harbour.2026-01\n", "\(answer.stderr)")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "it shuts down, it is not killed")
    }

    @Test func servingAStoreThatDoesNotExistIsExit2() throws {
        let missing = try Harness.temporaryDirectory().appending(path: "nothing")
        let result = try Harness.galley(["serve", "--store", missing.path, "--port", "0", "--json"])
        #expect(result.status == 2)
        #expect((result.json?["error"] as? [String: Any])?["id"] as? String == "store.missing")
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    /// With --json the listening line is one document (docs/json/serve.schema.json); a port
    /// another server holds is exit 2 with the error document, not a crash or a hang.
    @Test func jsonSaysWhereItListensAndATakenPortIsExit2() throws {
        let store = try Harness.temporaryDirectory().appending(path: "store")
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path,
                                    "--store", store.path, "-q"]).status == 0)
        let process = Process()
        process.executableURL = Harness.galley
        process.arguments = ["serve", "--store", store.path, "--port", "0", "--json"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var text = Data()
        let deadline = Date().addingTimeInterval(20)
        while !text.contains(UInt8(ascii: "}")), Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text.append(chunk)
        }
        let listening = try #require(try JSONSerialization.jsonObject(with: text) as? [String: Any])
        let port = try #require(listening["port"] as? Int)
        #expect(listening["url"] as? String == "http://127.0.0.1:\(port)")
        let file = try Harness.temporaryDirectory().appending(path: "serve.json")
        try text.write(to: file)
        let schema = try Harness.tool("python3", [Harness.root.appending(path: "Tests/Support/check_json_schema.py").path,
                                                  Harness.root.appending(path: "docs/json").path, "serve=\(file.path)"])
        #expect(schema.status == 0, "\(schema.stdout)\(schema.stderr)")

        let second = try Harness.galley(["serve", "--store", store.path, "--port", String(port), "--json"])
        #expect(second.status == 2)
        let error = try #require(second.json?["error"] as? [String: Any])
        #expect(error["id"] as? String == "run.failed")
        #expect((error["message"] as? String)?.hasPrefix("cannot listen on 127.0.0.1:\(port)") == true, "\(error)")
    }
}
