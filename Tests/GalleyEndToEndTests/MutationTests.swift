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
}
