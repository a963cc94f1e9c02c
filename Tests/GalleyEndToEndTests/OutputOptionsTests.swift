import Foundation
import Testing

/// `--quiet`, `--verbose` and `--color` on every command (docs/cli.md).
@Suite struct OutputOptionsTests {
    /// `galley help TOPIC` for a topic that is no command is a usage error naming it (it printed
    /// the root's help and exited 0); a real topic, at any depth, is help and 0.
    @Test func helpOnAnUnknownCommandIsAUsageError() throws {
        for topic in [["nosuch"], ["store", "nosuch"]] {
            let result = try Harness.galley(["help"] + topic)
            #expect(result.status == 2, "\(topic): \(result.status)")
            #expect(result.stderr.contains("no command `nosuch`"), "\(topic): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        for topic in [[], ["pack"], ["store", "check"]] {
            let result = try Harness.galley(["help"] + topic)
            #expect(result.status == 0 && result.stdout.contains("USAGE"), "\(topic): \(result.stderr)")
        }
    }

    /// Usage errors read alike on every command: `Error: ` and a message that starts in lower
    /// case and ends without a full stop, as every other error's does (render and validate
    /// said "Error: Give ...", import "Error: give ..."). Run for the commands whose
    /// checks say "give", and read from every `ValidationError` in the sources.
    @Test func usageErrorsAreWordedAlike() throws {
        for arguments in [["validate"], ["render"], ["import"], ["render", "--from-store"], ["validate", "-q", "-v", "x"]] {
            let result = try Harness.galley(arguments)
            #expect(result.status == 64 || result.status == 2, "\(arguments): \(result.status)")
            let line = result.stderr.split(separator: "\n").first { $0.hasPrefix("Error: ") }.map(String.init) ?? ""
            let message = line.dropFirst("Error: ".count)
            #expect(message.first?.isUppercase == false && message.last != ".", "\(arguments): \(line)")
        }
        let sources = Harness.root.appending(path: "Sources/galley")
        let literal = try Regex(#"ValidationError\("([^"\\]*)"\)"#)
        let walker = try #require(FileManager.default.enumerator(atPath: sources.path))
        var read = 0
        while let next = walker.nextObject() {
            guard let relative = next as? String, relative.hasSuffix(".swift") else { continue }
            let text = try String(contentsOf: sources.appending(path: relative), encoding: .utf8)
            for match in text.matches(of: literal) {
                let message = String(match.output[1].substring ?? "")
                #expect(message.first?.isUppercase == false && !message.hasSuffix("."), "\(relative): \(message)")
                read += 1
            }
        }
        #expect(read >= 20, "the usage errors were read")
    }

    /// Every duration option takes the same forms: bare seconds or a unit (`sync --timeout 5s`
    /// was refused as not a number while `--every 10` was refused as lacking a unit, and a
    /// bare `--signature-lifetime` meant days); out of range, each names its bounds alike.
    @Test func everyDurationTakesTheSameForms() throws {
        let options: [(command: [String], option: String)] = [
            (["sync", "http://127.0.0.1:9/feed"], "--timeout"), (["sync", "http://127.0.0.1:9/feed"], "--every"),
            (["serve"], "--idle-timeout"), (["serve"], "--send-timeout"), (["serve"], "--shared-max-age"),
            (["serve"], "--stale-while-revalidate"), (["serve"], "--signature-lifetime"),
            (["publish", "--to", "build/site"], "--signature-lifetime"), (["publish", "--to", "build/site"], "--shared-max-age"),
        ]
        for (command, option) in options {
            // Past every option's bound: a usage error that names the option and the forms.
            let tooLong = try Harness.galley(command + [option, "400d"])
            #expect(tooLong.status == 64 || tooLong.status == 2, "\(command) \(option): \(tooLong.stderr)")
            #expect(tooLong.stderr.contains("\(option) must be from ") && tooLong.stderr.contains("(90, 90s, 10m, 1h, 7d)"),
                    "\(command) \(option): \(tooLong.stderr)")
            for bad in ["5x", "1.5h", "", "10 m"] {
                let refused = try Harness.galley(command + [option, bad])
                #expect(refused.status != 0 && refused.stderr.contains("is invalid for '\(option) <duration>'"), "\(option) \(bad): \(refused.stderr)")
            }
        }
        // The same value bare and with units: sync against a closed port fails for the
        // connection, not the argument.
        for timeout in ["5", "5s"] {
            let sync = try Harness.galley(["sync", "http://127.0.0.1:9/feed", "--timeout", timeout, "--retries", "0",
                                           "--store", try Harness.temporaryDirectory().appending(path: "s").path])
            #expect(sync.status == 2 && sync.stderr.contains("cannot fetch"), "\(timeout): \(sync.stderr)")
        }
    }

    /// One form for dates in everything a command prints, text or JSON: a calendar day as
    /// ISO 8601 (`2026-01-05`), an instant as RFC 3339 in UTC with milliseconds
    /// (`2026-01-04T18:30:00.000Z`); never the wire format's `01/05/2026` or `+0000`.
    @Test func everyDatePrintsInOneForm() throws {
        let work = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let store = work.appending(path: "store").path
        let first = work.path + "/first/", bumped = work.path + "/bumped/"
        var printed: [(command: String, text: String)] = []
        func run(_ arguments: [String]) throws {
            for extra in [["-v"], ["--json"]] {
                let result = try Harness.galley(arguments + extra)
                printed.append((arguments.joined(separator: " ") + " " + extra[0], result.stdout + result.stderr))
            }
        }
        let zip = "com.example.harbour.2026-01.zip"
        try run(["pack", Harness.example.path, "-o", first, "--force"])
        try run(["pack", Harness.example.path, "-o", bumped, "--bump", "--force"])
        try run(["import", bumped + zip, "--store", store])
        try run(["import", first + zip, "--store", store])  // refused: the store has a newer version
        try run(["issues", "--store", store])
        try run(["issue", "show", "com.example.harbour.2026-01", "--store", store])
        try run(["article", "show", "fbf92e3a2aa69e50f4c7b6e7", "--store", store])
        try run(["search", "ferry", "--store", store])
        try run(["key-map", "check", Harness.root.appending(path: "Examples/key-maps/wordpress-posts.yaml").path,
                 Harness.root.appending(path: "Examples/key-maps/wordpress-posts.sample.json").path])
        try run(["import", "--articles", Harness.root.appending(path: "Examples/key-maps/wordpress-posts.sample.json").path,
                 "--key-map", Harness.root.appending(path: "Examples/key-maps/wordpress-posts.yaml").path, "--store", store])
        try run(["articles", "--independent", "--store", store])
        let instant = /\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:?\d\d)?/
        var instants = 0
        for (command, text) in printed {
            #expect(text.firstMatch(of: /\b\d\d\/\d\d\/\d{4}\b/) == nil, "\(command): \(text)")
            for match in text.matches(of: instant) {
                instants += 1
                #expect(String(match.output.0).wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(command): \(match.output.0)")
            }
        }
        #expect(instants > 20, "the commands print instants: \(instants)")
        #expect(printed.contains { $0.command.hasPrefix("issues") && $0.text.contains("2026-01-05") })
    }

    static let commands: [[String]] = [
        ["pack"], ["validate"], ["render"], ["import"], ["issues"], ["issue", "show"], ["articles"],
        ["article", "show"], ["article", "newer"], ["article", "older"], ["assets"], ["search"], ["delete"],
        ["store", "check"], ["store", "gc"],
    ]

    @Test func everyCommandTakesTheOutputOptions() throws {
        for command in Self.commands {
            let help = try Harness.galley(command + ["--help"])
            for option in ["--quiet", "--verbose", "--color <color>", "--json"] {
                #expect(help.stdout.contains(option), "`galley \(command.joined(separator: " "))` lacks \(option)")
            }
        }
    }

    /// Every command's help, found from `galley --help` down through each SUBCOMMANDS list,
    /// reads as prose: no line ends in a backslash (a `\\` where a Swift string meant `\` to
    /// join its lines, as `key-map check` once printed).
    @Test func everyHelpReadsWithoutStrayBackslashes() throws {
        var pending: [[String]] = [[]]
        var seen = 0
        while let command = pending.popLast() {
            let help = try Harness.galley(command + ["--help"])
            #expect(help.status == 0, "galley \(command.joined(separator: " ")) --help")
            seen += 1
            for line in help.stdout.split(separator: "\n") where line.hasSuffix("\\") {
                Issue.record("`galley \(command.joined(separator: " ")) --help`: \(line)")
            }
            var inList = false
            for line in help.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasSuffix("SUBCOMMANDS:") { inList = true; continue }
                if line.isEmpty { inList = false; continue }
                // A subcommand's row starts two spaces in; its wrapped description further.
                if inList, line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first, name != "See" {
                    pending.append(command + [String(name)])
                }
            }
        }
        #expect(seen > 20, "\(seen) helps read: the walk found the subcommands")
    }

    @Test func quietPrintsOnlyFindingsAndVerboseSaysWhatItDoes() throws {
        let work = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let quiet = try Harness.galley(["pack", Harness.example.path, "-o", work.appending(path: "q/").path, "--quiet"])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet.stdout)\(quiet.stderr)")
        let normal = try Harness.galley(["pack", Harness.example.path, "-o", work.appending(path: "n/").path])
        #expect(normal.stdout.hasPrefix("packed "))
        let verbose = try Harness.galley(["pack", Harness.example.path, "-o", work.appending(path: "v/").path, "--verbose"])
        #expect(verbose.status == 0 && verbose.stdout.hasPrefix("packed "))
        #expect(verbose.stderr.contains("· packed: ") && verbose.stderr.contains(" ms") && verbose.stderr.contains("· sha256 "),
                "\(verbose.stderr)")

        // Quiet keeps findings: a warning still shows.
        let warned = try Harness.galley([
            "pack", Harness.fixtures.appending(path: "sources/unknown-key-warning").path, "-o", work.appending(path: "w/").path, "-q",
        ])
        #expect(warned.status == 0 && warned.stdout.isEmpty && warned.stderr.contains("warning source.unknown-key"), "\(warned.stderr)")

        // A quiet validate prints the findings without the summary line.
        let bad = Harness.fixtures.appending(path: "zips/bad-crc-error.zip").path
        let validate = try Harness.galley(["validate", bad, "--quiet"])
        #expect(validate.status == 1 && validate.stdout.contains("error zip.crc") && !validate.stdout.contains("checked:"))

        let store = work.appending(path: "store").path
        let imported = try Harness.galley(["import", work.appending(path: "q").path, "--store", store, "-q"])
        #expect(imported.status == 0 && imported.stdout.isEmpty && imported.stderr.isEmpty)
        let none = try Harness.galley(["search", "zzzz", "--store", store, "--quiet"])
        #expect(none.status == 0 && none.stderr.isEmpty, "the note that nothing matched is not a finding")
        let listed = try Harness.galley(["issues", "--store", store, "--quiet"])
        #expect(listed.stdout.contains("com.example.harbour.2026-01"), "a listing is the result, printed under --quiet too")
        let verboseQuery = try Harness.galley(["issues", "--store", store, "-v"])
        #expect(verboseQuery.stderr.contains("· query: "), "\(verboseQuery.stderr)")
        // A streamed listing is timed with its printing, and says so.
        let verboseListing = try Harness.galley(["articles", "--store", store, "-v"])
        #expect(verboseListing.stderr.contains("· listing: ") && !verboseListing.stdout.isEmpty, "\(verboseListing.stderr)")

        let both = try Harness.galley(["issues", "--store", store, "-q", "-v"])
        #expect(both.status == 2 && both.stderr.contains("--quiet and --verbose"))
    }

    /// Text that starts with a dash is read as an option, and the parser then says only that the
    /// text is missing: the error names the word and how to pass it. After `--` it is text.
    @Test func textStartingWithADashIsExplained() throws {
        let work = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let packed = try Harness.galley(["pack", Harness.example.path, "-o", work.appending(path: "zip/").path, "-q"])
        let store = work.appending(path: "store").path
        let imported = try Harness.galley(["import", work.appending(path: "zip").path, "--store", store, "-q"])
        #expect(packed.status == 0 && imported.status == 0, "\(packed.stderr)\(imported.stderr)")
        let dashed = try Harness.galley(["search", "--limit", "5", "-40", "--store", store])
        #expect(dashed.status == 2, "\(dashed.stderr)")
        #expect(dashed.stderr.contains("`-40` was read as an option") && dashed.stderr.contains("galley search [OPTIONS] -- -40"),
                "\(dashed.stderr)")
        // A script that asked for JSON gets the same advice as the error document's hint.
        let json = try Harness.galley(["search", "-40", "--store", store, "--json"])
        let error = json.json?["error"] as? [String: Any]
        #expect(json.status == 2 && error?["id"] as? String == "usage", "\(json.stdout)")
        #expect((error?["hint"] as? String)?.contains("`-40` was read as an option") == true, "\(json.stdout)")
        let passed = try Harness.galley(["search", "--limit", "5", "--store", store, "--", "-40"])
        #expect(passed.status == 0 && !passed.stderr.contains("was read as an option"), "\(passed.stderr)")
        // Another usage error gets no such advice; neither does a short option.
        let unknown = try Harness.galley(["search", "harbour", "-x", "--store", store])
        #expect(unknown.status == 2 && unknown.stderr.contains("Unknown option") && !unknown.stderr.contains("Hint:"), "\(unknown.stderr)")
        let short = try Harness.galley(["search", "-q", "--store", store])
        #expect(short.status == 2 && !short.stderr.contains("Hint:"), "\(short.stderr)")
    }

    @Test func colorIsAutoAlwaysOrNever() throws {
        let bad = Harness.fixtures.appending(path: "zips/bad-crc-error.zip").path
        let escape = "\u{1B}["
        // The harness is not a terminal and sets NO_COLOR: auto means no colour.
        let auto = try Harness.galley(["validate", bad])
        #expect(auto.status == 1 && !auto.stdout.contains(escape))
        // An explicit --color always wins over NO_COLOR and a pipe.
        let always = try Harness.galley(["validate", bad, "--color", "always"])
        #expect(always.status == 1 && always.stdout.contains(escape + "31;1merror"), "\(always.stdout)")
        let never = try Harness.galley(["validate", bad, "--color", "never"], environment: ["NO_COLOR": ""])
        #expect(never.status == 1 && !never.stdout.contains(escape))
        let missing = try Harness.galley(["issues", "--store", "/nonexistent-galley-store", "--color", "always"])
        #expect(missing.status == 2 && missing.stderr.contains(escape + "31;1merror:"), "\(missing.stderr)")
        let wrong = try Harness.galley(["issues", "--color", "sometimes"])
        #expect(wrong.status == 2 && wrong.stderr.contains("auto"), "\(wrong.stderr)")
    }
}
