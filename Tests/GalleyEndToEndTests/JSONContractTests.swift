import Foundation
import Testing

/// The scripts' contract (docs/json.md): with `--json`, standard output holds exactly one JSON
/// document, valid against its schema in docs/json/, carrying `schema_version`, with snake_case
/// keys, and the exit status agrees with what it says. Every command runs here on success and
/// on failure, and all outputs are checked against the schemas in one run of
/// Tests/Support/check_json_schema.py (the `jsonschema` library).
@Suite(.serialized) struct JSONContractTests {
    static let issue = "com.example.harbour.2026-01"
    static let article = "fbf92e3a2aa69e50f4c7b6e7"

    /// Name, schema, arguments (`WORK` is the working folder), in order.
    static let steps: [(String, String, [String])] = [
        ("pack", "pack", ["pack", "winter-2026", "-o", "WORK/dist/", "--json"]),
        ("pack-problems", "pack", ["pack", "FIXTURES/sources/missing-asset-error", "-o", "WORK/x/", "--json"]),
        ("pack-missing", "pack", ["pack", "no-such-folder", "--json"]),
        ("pack-exists", "pack", ["pack", "winter-2026", "-o", "WORK/dist/", "--json"]),
        ("validate", "validate", ["validate", "dist/\(issue).zip", "--json"]),
        ("validate-format", "validate", ["validate", "winter-2026", "--format", "json", "--strict"]),
        ("validate-errors", "validate", ["validate", "FIXTURES/zips/bad-crc-error.zip", "--json"]),
        ("validate-missing", "validate", ["validate", "dist/\(issue).zip", "nope.zip", "--json"]),
        ("validate-config", "error", ["validate", "dist/\(issue).zip", "--ignore", "no.such-check", "--json"]),
        ("validate-checks", "validate-checks", ["validate", "--list-checks", "--json"]),
        ("render-site", "render", ["render", "dist/\(issue).zip", "-o", "WORK/site", "--json"]),
        ("render-article", "render", ["render", "dist/\(issue).zip", "--article", article, "--json"]),
        ("render-article-file", "render", ["render", "dist/\(issue).zip", "--article", article, "--page", "-o", "WORK/a.html", "--json"]),
        ("render-unknown", "render", ["render", "dist/\(issue).zip", "--article", "nope", "--json"]),
        ("issues-no-store", "issues", ["issues", "--store", "WORK/no-store", "--json"]),
        ("import", "import", ["import", "dist/\(issue).zip", "--store", "store", "--json"]),
        ("import-refused", "import", ["import", "FIXTURES/zips/missing-file-error.zip", "--store", "store", "--json"]),
        ("import-failed", "import", ["import", "nope.zip", "--store", "store", "--json"]),
        ("issues", "issues", ["issues", "--store", "store", "--json"]),
        ("issue-show", "issue-show", ["issue", "show", issue, "--store", "store", "--json"]),
        ("import-articles", "import-articles", ["import", "--articles", "EXAMPLES/key-maps/wordpress-posts.sample.json",
                                                "--key-map", "EXAMPLES/key-maps/wordpress-posts.yaml", "--store", "store", "--json"]),
        ("import-articles-missing", "import-articles", ["import", "--articles", "nope.json", "--store", "store", "--json"]),
        ("articles-independent", "independent-articles", ["articles", "--independent", "--store", "store", "--json"]),
        ("key-map-check", "key-map-check", ["key-map", "check", "EXAMPLES/key-maps/grails-announcements.yaml",
                                            "EXAMPLES/key-maps/grails-announcements.sample.json", "--json"]),
        ("key-map-bad", "key-map-check", ["key-map", "check", "FIXTURES/key-maps/unknown-field-error.yaml", "--json"]),
        ("issue-show-unknown", "issue-show", ["issue", "show", "nope", "--store", "store", "--json"]),
        ("articles", "articles", ["articles", "--store", "store", "--json"]),
        ("articles-unknown-issue", "articles", ["articles", "--issue", "nope", "--store", "store", "--json"]),
        ("article-show", "article-show", ["article", "show", article, "--store", "store", "--json"]),
        ("article-meta", "article-meta", ["article", "show", article, "--meta", "reading_time", "--store", "store", "--json"]),
        ("article-meta-missing", "article-meta", ["article", "show", article, "--meta", "nope", "--store", "store", "--json"]),
        ("article-older", "articles", ["article", "older", article, "--store", "store", "--json"]),
        ("assets", "assets", ["assets", "--issue", issue, "--store", "store", "--json"]),
        ("assets-count", "assets", ["assets", "--issue", issue, "--count", "--store", "store", "--json"]),
        ("search", "search", ["search", "harbour", "--store", "store", "--json"]),
        ("search-none", "search", ["search", "zzzzzz", "--store", "store", "--json"]),
        ("store-check", "store-check", ["store", "check", "--store", "store", "--json"]),
        ("store-gc", "store-gc", ["store", "gc", "--store", "store", "--json"]),
        ("publish", "publish", ["publish", "--store", "store", "--to", "WORK/site", "--json"]),
        ("publish-no-store", "publish", ["publish", "--store", "WORK/no-store", "--to", "WORK/site2", "--json"]),
        ("store-copy", "store-copy", ["store", "copy", "--from", "store", "--to", "WORK/copy", "--json"]),
        ("store-copy-missing", "store-copy", ["store", "copy", "--from", "WORK/no-store", "--to", "WORK/copy2", "--json"]),
        ("store-copy-bad-address", "store-copy", ["store", "copy", "--from", "store", "--to", "postgres://nobody@127.0.0.1:1/x", "--json"]),
        ("delete-unconfirmed", "delete", ["delete", issue, "--store", "store", "--json"]),
        ("delete", "delete", ["delete", issue, "--yes", "--store", "store", "--json"]),
        ("keys", "keys", ["keys", "generate", "-o", "WORK/keys", "--json"]),
        ("keys-exists", "keys", ["keys", "generate", "-o", "WORK/keys", "--json"]),
        ("usage", "error", ["issues", "--no-such-option", "--json"]),
        ("usage-format", "error", ["validate", "--format", "json", "--no-such-option"]),
    ]

    /// What each failing step must say it is (docs/json.md's error ids).
    static let expectedErrors: [String: String] = [
        "pack-problems": "input.problems", "pack-missing": "input.not-found", "pack-exists": "output.exists",
        "validate-config": "config.invalid", "render-unknown": "id.not-found", "issues-no-store": "store.missing",
        "issue-show-unknown": "id.not-found", "articles-unknown-issue": "id.not-found",
        "article-meta-missing": "id.not-found", "delete-unconfirmed": "confirmation.missing", "usage": "usage", "keys-exists": "output.exists", "import-articles-missing": "input.not-found", "key-map-bad": "config.invalid",
        "usage-format": "usage", "store-copy-missing": "store.missing", "store-copy-bad-address": "usage",
        "publish-no-store": "store.missing",
    ]

    @Test func everyJSONOutputKeepsTheContract() throws {
        let work = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.copyItem(at: Harness.example, to: work.appending(path: "winter-2026"))
        let outputs = work.appending(path: "outputs")
        try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true)
        var pairs: [String] = []
        for (name, schema, arguments) in Self.steps {
            let resolved = arguments.map {
                $0.replacingOccurrences(of: "WORK", with: work.path).replacingOccurrences(of: "FIXTURES", with: Harness.fixtures.path)
                    .replacingOccurrences(of: "EXAMPLES", with: Harness.root.appending(path: "Examples").path)
            }
            let result = try Harness.galley(resolved, in: work)
            let context = "`galley \(arguments.joined(separator: " "))` (exit \(result.status)):\n\(result.stdout)\(result.stderr)"
            // Exactly one JSON object on standard output, whatever happened.
            let document = try #require(result.json, "not one JSON document: \(context)")
            #expect(document["schema_version"] as? Int == 1, "\(context)")
            #expect(Self.keysAreSnakeCase(document), "a key is not snake_case: \(context)")
            #expect(Self.expectedStatus(document) == result.status, "the exit status disagrees with the document: \(context)")
            let errorID = (document["error"] as? [String: Any])?["id"] as? String
            #expect(errorID == Self.expectedErrors[name], "\(name): error id \(errorID ?? "none"): \(context)")
            if errorID != nil {
                #expect(result.stderr.lowercased().contains("error"), "the error is said in words on standard error too: \(context)")
            }
            let file = outputs.appending(path: "\(name).json")
            try Data(result.stdout.utf8).write(to: file)
            pairs.append("\(schema)=\(file.path)")
        }
        let check = try Harness.tool("python3", [Self.checker.path, Self.schemas.path] + pairs)
        #expect(check.status == 0, "outputs that break their schema:\n\(check.stdout)\(check.stderr)")
    }

    /// Under --json the findings still go to standard error in words, as docs/json.md says,
    /// while standard output holds the document alone.
    @Test func findingsStayOnStandardErrorUnderJSON() throws {
        let work = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let source = Harness.fixtures.appending(path: "sources/unknown-key-warning").path
        let pack = try Harness.galley(["pack", source, "-o", work.appending(path: "out/").path, "--json"])
        #expect(pack.status == 0 && pack.json?["warnings"] != nil, "\(pack.stdout)")
        #expect(pack.stderr.contains("warning source.unknown-key"), "\(pack.stderr)")
        let refused = try Harness.galley([
            "import", Harness.fixtures.appending(path: "zips/missing-file-error.zip").path,
            "--store", work.appending(path: "store").path, "--json",
        ])
        #expect(refused.status == 1 && Harness.imports(refused).first?["status"] as? String == "refused")
        #expect(refused.stderr.contains(": error "), "\(refused.stderr)")
        let failing = try Harness.galley(["pack", Harness.fixtures.appending(path: "sources/missing-asset-error").path,
                                          "-o", work.appending(path: "x/").path, "--json"])
        #expect(failing.status == 1 && (failing.json?["diagnostics"] as? [Any])?.isEmpty == false)
        #expect(failing.stderr.contains("pack failed: "), "\(failing.stderr)")
    }

    /// The schemas themselves are strict: a document with an unknown key or a camelCase key fails.
    @Test func theSchemasRejectWhatTheContractForbids() throws {
        let work = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let bad: [(String, String)] = [
            ("issues", #"{"schema_version": 1, "issues": [{"globalID": "x"}]}"#),
            ("issues", #"{"issues": []}"#),
            ("articles", #"{"schema_version": 1, "articles": [{"global_id": "a", "issue_global_id": "i", "placement": 1, "title": "t", "dek": "", "section": "", "type": "article", "author": "", "date": "04/01/2026", "featured": false, "keywords": []}]}"#),
            ("assets", #"{"schema_version": 1, "assets": [{"global_id": "a", "issue_global_id": "i", "article_global_id": null, "kind": "image", "placement": 1, "caption": "", "credit": "", "file_name": "a.jpg", "crop_350_350": "a.jpg", "path": "/a.jpg", "metadata": "{}"}]}"#),
            ("error", #"{"schema_version": 1, "error": {"id": "made.up", "message": "m", "path": null, "hint": null}}"#),
        ]
        var pairs: [String] = []
        for (index, (schema, text)) in bad.enumerated() {
            let file = work.appending(path: "\(index).json")
            try Data(text.utf8).write(to: file)
            pairs.append("\(schema)=\(file.path)")
        }
        for pair in pairs {
            let check = try Harness.tool("python3", [Self.checker.path, Self.schemas.path, pair])
            #expect(check.status == 1, "\(pair) should break its schema:\n\(check.stdout)\(check.stderr)")
        }
    }

    static let checker = Harness.root.appending(path: "Tests/Support/check_json_schema.py")
    static let schemas = Harness.root.appending(path: "docs/json")

    /// The exit status a document stands for (docs/json.md): an error document 1 for
    /// `input.problems`, else 2; validate's summary says its own; import's worst outcome; else 0.
    static func expectedStatus(_ document: [String: Any]) -> Int32 {
        if let error = document["error"] as? [String: Any] { return error["id"] as? String == "input.problems" ? 1 : 2 }
        if let summary = document["summary"] as? [String: Any], let status = summary["exit_status"] as? Int { return Int32(status) }
        if let imports = document["imports"] as? [[String: Any]] {
            let statuses = imports.compactMap { $0["status"] as? String }
            return statuses.contains("failed") ? 2 : statuses.contains("refused") ? 1 : 0
        }
        if let problems = document["problems"] as? [Any] { return problems.isEmpty ? 0 : 1 }
        return 0
    }

    /// Every key Galley chose is snake_case; the values of metadata objects are the publisher's.
    static func keysAreSnakeCase(_ value: Any) -> Bool {
        if let object = value as? [String: Any] {
            return object.allSatisfy { key, item in
                key.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" }
                    && (["metadata", "custom_meta", "value"].contains(key) || keysAreSnakeCase(item))
            }
        }
        if let array = value as? [Any] { return array.allSatisfy(keysAreSnakeCase) }
        return true
    }
}
