import Foundation
import Testing

/// docs/architecture.md's table of targets is Package.swift's: the same targets, each with the
/// same Galley and C targets it depends on. A target added, removed or rewired without the doc
/// (or the other way round) fails here.
@Suite struct ArchitectureTests {
    /// Target name to the names of the package's own targets it depends on, from Package.swift.
    static func packageTargets() throws -> [String: Set<String>] {
        let text = try String(contentsOf: Harness.root.appending(path: "Package.swift"), encoding: .utf8)
        let declaration = try Regex(#"\.(target|executableTarget|systemLibrary|testTarget)\("#)
        let quoted = try Regex(#"(name: |package: )?"([A-Za-z0-9_]+)""#)
        var chunks: [Substring] = []
        var starts = text.ranges(of: declaration).map(\.lowerBound)
        starts.append(text.endIndex)
        for (start, end) in zip(starts, starts.dropFirst()) { chunks.append(text[start..<end]) }
        var targets: [String: [String]] = [:]
        for chunk in chunks where !chunk.hasPrefix(".testTarget(") {
            var name: String?
            var strings: [String] = []
            for match in chunk.matches(of: quoted) {
                let label = match.output[1].substring.map(String.init)
                let value = String(match.output[2].substring ?? "")
                if name == nil, label == "name: " { name = value } else if label == nil { strings.append(value) }
            }
            if let name { targets[name] = strings }
        }
        let names = Set(targets.keys)
        return targets.mapValues { Set($0.filter(names.contains)) }
    }

    /// The same, from the doc's table.
    static func documentedTargets() throws -> [String: Set<String>] {
        let text = try String(contentsOf: Harness.root.appending(path: "docs/architecture.md"), encoding: .utf8)
        var targets: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4 else { continue }
            let name = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            targets[name] = Set(cells[3].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        return targets
    }

    @Test func theDocsTableOfTargetsIsPackageSwifts() throws {
        let package = try Self.packageTargets()
        let documented = try Self.documentedTargets()
        #expect(package.count >= 20, "Package.swift's targets were read: \(package.keys.sorted())")
        #expect(Set(documented.keys) == Set(package.keys),
                "only in Package.swift: \(Set(package.keys).subtracting(documented.keys).sorted()); only in the doc: \(Set(documented.keys).subtracting(package.keys).sorted())")
        for (name, dependencies) in package {
            guard let listed = documented[name] else { continue }
            #expect(listed == dependencies, "\(name): Package.swift \(dependencies.sorted()), docs/architecture.md \(listed.sorted())")
        }
    }

    /// Serve and sync see the store's protocol only: no backend, no database client.
    @Test func serveAndSyncImportNoBackend() throws {
        let package = try Self.packageTargets()
        for name in ["GalleyServe", "GalleySync"] {
            let dependencies = try #require(package[name])
            #expect(dependencies.isDisjoint(with: ["GalleyStoreSQLite", "GalleyStorePostgres", "GalleyStoreBackends"]), "\(name): \(dependencies.sorted())")
        }
        #expect(try #require(package["GalleyStore"]).isDisjoint(with: ["GalleyStoreSQLite", "GalleyStorePostgres"]))
    }

    /// A backend commits what the import job staged: no backend opens the zip, runs one of
    /// validate's checks or the pass itself (`ImportJob.run(into:)` does, once, for every store).
    @Test func backendsOnlyCommitWhatTheImportJobStaged() throws {
        let calls = ["ImportPass.run(", "checkHead(", "takeCheck(", "takeOpening(", "checkBeside(", "checkContent(",
                     "ImportVersions.decide("]
        var read = 0
        for target in ["GalleyStoreSQLite", "GalleyStorePostgres"] {
            let folder = Harness.root.appending(path: "Sources/\(target)")
            let walker = try #require(FileManager.default.enumerator(atPath: folder.path))
            while let next = walker.nextObject() {
                guard let relative = next as? String, relative.hasSuffix(".swift") else { continue }
                let text = try String(contentsOf: folder.appending(path: relative), encoding: .utf8)
                read += 1
                for call in calls {
                    #expect(!text.contains(call), "Sources/\(target)/\(relative) calls \(call)")
                }
            }
        }
        #expect(read >= 10, "the backends' sources were read")
    }

    /// Each library's imports are what Package.swift says it depends on: no module imported that
    /// its target does not declare (it builds today only because another target brought it in),
    /// and no dependency declared that none of its files imports.
    @Test func eachTargetImportsWhatItDeclares() throws {
        let text = try String(contentsOf: Harness.root.appending(path: "Package.swift"), encoding: .utf8)
        let declaration = try Regex(#"\.(target|executableTarget)\("#)
        let quoted = try Regex(#"(name: |package: |path: )?"([A-Za-z0-9_/]+)""#)
        let importLine = try Regex(#"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:package |public |internal )?import\s+([A-Za-z0-9_]+)"#)
        // The toolchain's own modules, which no target declares.
        let system: Set = ["Foundation", "FoundationEssentials", "Glibc", "Darwin", "Dispatch", "Synchronization"]
        var starts = text.ranges(of: try Regex(#"\.(target|executableTarget|systemLibrary|testTarget)\("#)).map(\.lowerBound)
        starts.append(text.endIndex)
        var checked = 0
        for (start, end) in zip(starts, starts.dropFirst()) where text[start..<end].prefixMatch(of: declaration) != nil {
            var name: String?, path: String?
            var declared: Set<String> = []
            for match in text[start..<end].matches(of: quoted) {
                let label = match.output[1].substring.map(String.init)
                let value = String(match.output[2].substring ?? "")
                switch label {
                case "name: " where name == nil: name = value
                case "name: ", nil: declared.insert(value)
                case "path: ": path = value
                default: break
                }
            }
            let target = try #require(name)
            let folder = Harness.root.appending(path: path ?? "Sources/\(target)")
            var imported: Set<String> = []
            let walker = try #require(FileManager.default.enumerator(atPath: folder.path))
            while let next = walker.nextObject() {
                guard let relative = next as? String, relative.hasSuffix(".swift") else { continue }
                let source = try String(contentsOf: folder.appending(path: relative), encoding: .utf8)
                for line in source.split(separator: "\n") {
                    if let match = line.prefixMatch(of: importLine), let module = match.output[1].substring { imported.insert(String(module)) }
                }
            }
            let undeclared = imported.subtracting(declared).subtracting(system)
            let unused = declared.subtracting(imported)
            #expect(undeclared.isEmpty, "\(target) imports \(undeclared.sorted()) without declaring it in Package.swift")
            #expect(unused.isEmpty, "\(target) declares \(unused.sorted()) in Package.swift and no file imports it")
            checked += 1
        }
        #expect(checked >= 14, "the library targets were read")
    }

    /// Test targets mirror the libraries: every file of `Tests/<Library>Tests` imports its
    /// library (a test of a lower library's type lives with that library).
    @Test func eachLibrarysTestsImportIt() throws {
        let tests = Harness.root.appending(path: "Tests")
        var read = 0
        for folder in try FileManager.default.contentsOfDirectory(atPath: tests.path) where folder.hasSuffix("Tests") {
            let library = String(folder.dropLast("Tests".count))
            guard FileManager.default.fileExists(atPath: Harness.root.appending(path: "Sources/\(library)").path) else { continue }
            for file in try FileManager.default.contentsOfDirectory(atPath: tests.appending(path: folder).path) where file.hasSuffix(".swift") {
                let source = try String(contentsOf: tests.appending(path: "\(folder)/\(file)"), encoding: .utf8)
                let imports = source.split(separator: "\n").contains { $0 == "import \(library)" || $0 == "@testable import \(library)" }
                #expect(imports, "Tests/\(folder)/\(file) does not import \(library)")
                read += 1
            }
        }
        #expect(read >= 50, "the libraries' test files were read")
    }
}
