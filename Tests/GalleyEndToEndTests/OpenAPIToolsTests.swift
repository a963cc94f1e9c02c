import Foundation
import Testing

/// docs/openapi.yaml in the standard tools (installed by scripts/setup.sh --test-peers into
/// .build/tools/openapi): it is what its sources make, openapi-spec-validator takes it, and a
/// bounded schemathesis run against the binary finds no answer the document does not allow.
@Suite struct OpenAPIToolsTests {
    static let tools = Harness.root.appending(path: ".build/tools/openapi/bin")

    static func tool(_ name: String) throws -> URL {
        let url = tools.appending(path: name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw GalleyTestError("\(name) is not installed: run scripts/setup.sh --test-peers")
        }
        return url
    }

    @Test func theDocumentIsWhatItsSourcesMake() throws {
        let check = try Harness.tool("python3", [Harness.root.appending(path: "scripts/bundle_openapi.py").path, "--check"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let text = try String(contentsOf: Harness.root.appending(path: "docs/openapi.yaml"), encoding: .utf8)
        #expect(!text.contains("urn:galley"), "no reference a standard tool cannot follow")
    }

    @Test func openapiSpecValidatorTakesIt() throws {
        let result = try Harness.run(try Self.tool("openapi-spec-validator"), [Harness.root.appending(path: "docs/openapi.yaml").path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    /// Every operation but the upload (schemathesis cannot make an application/zip body; the
    /// upload is exercised with real zips by check_openapi.py), with every check but "a request
    /// the schema allows is answered 2xx" (a valid-looking id of no issue is a 404, rightly).
    @Test func schemathesisFindsNoAnswerTheDocumentDoesNotAllow() throws {
        let work = try Harness.temporaryDirectory()
        let store = work.appending(path: "store")
        #expect(try Harness.galley(["import", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--store", store.path, "-q"]).status == 0)
        let token = "a-long-test-token-0123456789"
        try "\(token)\n".write(to: work.appending(path: "token"), atomically: true, encoding: .utf8)
        let server = try Harness.listening(["serve", "--store", store.path, "--port", "0", "--json", "--token-file",
                                            work.appending(path: "token").path, "-q"])
        defer { server.stop() }
        let result = try Harness.run(URL(fileURLWithPath: "/usr/bin/timeout"), [
            "600", try Self.tool("schemathesis").path, "run", Harness.root.appending(path: "docs/openapi.yaml").path,
            "--url", "http://127.0.0.1:\(server.port)", "--max-examples", "20", "--seed", "1", "--checks", "all",
            "--exclude-checks", "positive_data_acceptance", "--exclude-method", "POST", "-H", "Authorization: Bearer \(token)",
            "--no-color",
        ], environment: ["SCHEMATHESIS_HOOKS": "", "HOME": work.path], in: work)  // its .schemathesis/ cache lands in `work`
        #expect(result.status == 0, "\(result.stdout.suffix(6000))\(result.stderr.suffix(2000))")
    }
}
