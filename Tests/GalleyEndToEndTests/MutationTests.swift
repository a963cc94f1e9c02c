import Foundation
import GalleyTestSupport
import Testing

/// Bad input is normal input: damaged copies of a valid zip and manifest, made by a seeded
/// generator, must each end in a report (exit 0 or 1), never a crash, a hang or status 2.
@Suite struct MutationTests {
    static func mutate(_ data: [UInt8], seed: UInt64) -> [UInt8] {
        var generator = SeededGenerator(state: seed)
        var bytes = data
        for _ in 0..<(1 + generator.below(8)) {
            guard !bytes.isEmpty else { break }
            let position = generator.below(bytes.count)
            switch generator.below(10) {
            case 0..<6: bytes[position] = UInt8(generator.below(256))
            case 6..<8: bytes.removeSubrange(position..<min(bytes.count, position + 1 + generator.below(50)))
            default: bytes.insert(contentsOf: (0..<(1 + generator.below(20))).map { _ in UInt8(generator.below(256)) }, at: position)
            }
        }
        return bytes
    }

    @Test(arguments: [
        ("zips/example-valid.zip", "zip"), ("manifests/template-valid.json", "json"),
        // The second hostile pass's fixtures, as seeds too.
        ("zips/duplicate-key-error.zip", "zip"), ("zips/link-extra-field-error.zip", "zip"),
        ("zips/orphan-local-entry-error.zip", "zip"), ("zips/data-descriptor-valid.zip", "zip"),
        ("zips/deep-entry-error.zip", "zip"), ("zips/trailing-data-error.zip", "zip"),
        ("zips/zip64-huge-size-error.zip", "zip"), ("zips/svg-javascript-entity-error.zip", "zip"),
        ("zips/hostile-preview-error.zip", "zip"), ("manifests/impossible-dates-error.json", "json"),
    ])
    func damagedInputsAreReportedNeverCrash(fixture: String, ext: String) throws {
        let original = try [UInt8](Data(contentsOf: Harness.fixtures.appending(path: fixture)))
        let folder = try Harness.temporaryDirectory()
        for seed in UInt64(1)...20 {
            let file = folder.appending(path: "mutant-\(seed).\(ext)")
            try Data(Self.mutate(original, seed: seed)).write(to: file)
            let result = try Harness.galley(["validate", file.path, "--format", "json"])
            #expect(result.status == 0 || result.status == 1, "seed \(seed): status \(result.status)\n\(result.stderr)")
            #expect(result.json != nil, "seed \(seed): the report is JSON")
        }
    }

    /// Import refuses exactly what validate refuses (both run the same checks), and the store
    /// stays sound through every refusal and every import of a damaged copy that passed. The
    /// packed example (real media) and two small zips are the seeds.
    @Test func importRefusesWhatValidateRefuses() throws {
        let folder = try Harness.temporaryDirectory()
        let packed = try Harness.galley(["pack", Harness.example.path, "-o", folder.path, "--thumbnails", "none", "-q"])
        #expect(packed.status == 0, "\(packed.stderr)")
        let seeds = try [folder.appending(path: "com.example.harbour.2026-01.zip"),
                         Harness.fixtures.appending(path: "zips/example-valid.zip"),
                         Harness.fixtures.appending(path: "zips/data-descriptor-valid.zip")].map { try [UInt8](Data(contentsOf: $0)) }
        let store = folder.appending(path: "store")
        let first = try Harness.galley(["import", folder.appending(path: "com.example.harbour.2026-01.zip").path, "--store", store.path, "-q"])
        #expect(first.status == 0, "\(first.stderr)")
        var refused = 0
        for seed in UInt64(1)...45 {
            let file = folder.appending(path: "mutant-\(seed).zip")
            try Data(Self.mutate(seeds[Int(seed) % seeds.count], seed: seed)).write(to: file)
            let validated = try Harness.galley(["validate", file.path, "--json"])
            let imported = try Harness.galley(["import", file.path, "--store", store.path, "--force", "--json"])
            #expect(validated.status == 0 || validated.status == 1, "seed \(seed): validate status \(validated.status)")
            #expect(imported.status == validated.status,
                    "seed \(seed): validate \(validated.status), import \(imported.status)\n\(validated.stdout)\n\(imported.stdout)")
            if imported.status == 1 { refused += 1 }
        }
        #expect(refused > 10, "most damaged copies are refused (\(refused) of 45)")
        let check = try Harness.galley(["store", "check", "--store", store.path, "--json"])
        #expect(check.status == 0, "\(check.stdout)\n\(check.stderr)")
    }

    /// A source folder with damaged text (front matter, YAML, bodies): pack and `validate
    /// SOURCE` agree on whether it is refused, and what pack writes passes `galley validate`.
    @Test func packAndValidateAgreeOnDamagedSources() throws {
        let texts = ["issue.yaml", "articles/01-the-lighthouse-keepers/article.md", "articles/02-night-ferry/article.html",
                     "articles/03-harbour-in-motion/article.md", "articles/04-letters/article.yaml", "articles/04-letters/article.html"]
        let snippets = ["\n---\n", ": ", "- ", "{", "[", "\"", "<script>x()</script>", "<p><b>", "<img src=\"https://e.com/a.png\">",
                        "<!-- [ASSET: nothing] -->", "date: 2026-02-30\n", "\u{0}", "&a", "*a", "\t"]
        for seed in UInt64(1)...14 {
            var generator = SeededGenerator(state: seed)
            let source = try Harness.copy(Harness.example)
            for _ in 0..<(1 + generator.below(2)) {
                let file = source.appending(path: texts[generator.below(texts.count)])
                var text = try [UInt8](Data(contentsOf: file))
                let position = generator.below(text.count + 1)
                if generator.below(3) == 0 {
                    text.removeSubrange(position..<min(text.count, position + 1 + generator.below(30)))
                } else {
                    text.insert(contentsOf: Array(snippets[generator.below(snippets.count)].utf8), at: position)
                }
                try Data(text).write(to: file)
            }
            let out = source.deletingLastPathComponent().appending(path: "out-\(seed)")
            let packed = try Harness.galley(["pack", source.path, "-o", out.path, "--thumbnails", "none", "--json"])
            let validated = try Harness.galley(["validate", source.path, "--json"])
            #expect(packed.status == 0 || packed.status == 1, "seed \(seed): pack status \(packed.status)\n\(packed.stderr)")
            #expect(validated.status == packed.status, "seed \(seed): validate \(validated.status), pack \(packed.status)\n\(validated.stdout)")
            if packed.status == 0 {
                let zip = out.appending(path: "com.example.harbour.2026-01.zip")
                let gate = try Harness.galley(["validate", zip.path, "--json"])
                #expect(gate.status == 0, "seed \(seed): validate refuses what pack wrote\n\(gate.stdout)")
            }
        }
    }
}
