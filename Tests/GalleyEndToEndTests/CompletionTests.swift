import Foundation
import Testing

/// The shell completions offer option values and the store's issue ids (docs/cli.md).
@Suite struct CompletionTests {
    @Test func everyShellGetsTheClosedChoices() throws {
        for shell in ["bash", "zsh", "fish"] {
            let script = try Harness.galley(["--generate-completion-script", shell])
            #expect(script.status == 0)
            for value in ["junit", "sarif", "dumpling", "semantic", "never", "always", "sound", "keep"] {
                #expect(script.stdout.contains(value), "\(shell) completion lacks \(value)")
            }
            #expect(script.stdout.contains("---completion issue show"), "\(shell) completes issue ids")
        }
    }

    @Test func issueIDsCompleteFromTheStoreOnTheLine() throws {
        let work = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let store = work.appending(path: "store").path
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", store]).status == 0)
        // Completed as bash completes on <TAB>, through the generated script, with the binary
        // under test first on PATH (the script runs `galley ---completion ...`).
        let script = work.appending(path: "galley.bash")
        try Data(try Harness.galley(["--generate-completion-script", "bash"]).stdout.utf8).write(to: script)
        let driver = Harness.root.appending(path: "Tests/Support/bash_complete.sh").path
        let path = Harness.galley.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
        func complete(_ line: String) throws -> [String] {
            let result = try Harness.tool("bash", [driver, script.path, line], environment: ["PATH": path])
            return result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(try complete("galley issue show --store \(store) ") == ["example-valid"])
        #expect(try complete("galley search x --store \(store) --issue exa") == ["example-valid"])
        #expect(try complete("galley search x --store \(store) --issue zz").isEmpty)
        #expect(try complete("galley delete --store \(store) ex") == ["example-valid"])
        #expect(try complete("galley validate --format j") == ["json", "junit"])
        // No store: nothing, and nothing created.
        let missing = work.appending(path: "no-store").path
        #expect(try complete("galley issue show --store \(missing) ").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}
