import ArgumentParser
import Foundation
import GalleyCore
import GalleyFormats

@main
struct GalleyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "galley",
        abstract: "Pack, check and preview Dumpling issue zips.",
        discussion: """
            An issue zip is one folder named after the issue's store id (apple_id), holding \
            latest.json and the media files, as Dumpling reader apps import it.

            Exit status: 0 when the work is done, 1 when the input has problems (each one is \
            reported with its file, line and a hint), 2 when galley could not run (bad \
            arguments, unreadable paths, an output that exists), 130 or 143 when stopped by \
            Ctrl-C or SIGTERM (pack removes its temporary files first), 141 when the program \
            reading its output has gone (`galley search ... | head -3`).

            Every command takes --quiet (findings and errors only), --verbose (what galley \
            does and how long it takes), --color auto|always|never (NO_COLOR turns auto off) \
            and --json (one JSON document on standard output, errors included; docs/json.md). \
            Progress is shown only on a terminal.
            """,
        version: Galley.version,
        groupedSubcommands: [
            CommandGroup(name: "Issue files", subcommands: [PackCommand.self, ValidateCommand.self, RenderCommand.self]),
            CommandGroup(name: "Store", subcommands: [
                ImportCommand.self, IssuesCommand.self, IssueCommand.self, ArticlesCommand.self, ArticleCommand.self,
                AssetsCommand.self, SearchCommand.self, DeleteCommand.self, StoreCommand.self,
            ]),
            CommandGroup(name: "Delivery", subcommands: [ServeCommand.self, PublishCommand.self, SyncCommand.self, KeysCommand.self, KeyMapCommand.self, PreviewCommand.self]),
        ]
    )

    /// Whether a command line asks for JSON (`--json`, or validate's `--format json`), read
    /// from the raw words because it could not be parsed.
    static func wantsJSON(_ words: ArraySlice<String>) -> Bool {
        words.contains("--json") || words.contains("--format=json")
            || zip(words, words.dropFirst()).contains { $0 == "--format" && $1 == "json" }
    }

    /// Advice for a command line whose text starts with a dash (`galley search -40`): the
    /// parser reads such a word as an option and then misses the text, and says only that.
    /// nil when the error is another one, or no such word came before a `--`.
    static func dashedTextAdvice(_ words: ArraySlice<String>, message: String) -> String? {
        guard message.contains("Missing expected argument") else { return nil }
        let beforeEnd = words.prefix { $0 != "--" }
        // `-q` and `--name` are options; `-40` and `-word` read as text to a person.
        guard let dashed = beforeEnd.first(where: { $0.hasPrefix("-") && !$0.hasPrefix("--") && $0.count > 2 }) else { return nil }
        let command = beforeEnd.prefix { !$0.hasPrefix("-") }.joined(separator: " ")
        return "`\(dashed)` was read as an option, not as an argument: put an argument that starts with a dash last, after `--` "
            + "(galley \(command.isEmpty ? "COMMAND" : command) [OPTIONS] -- \(dashed))."
    }

    /// `galley help TOPIC…` for a topic that is no command: ArgumentParser prints the root's help
    /// and exits 0, which tells a script the topic exists. A usage error instead, naming it.
    static func requireKnownHelpTopic(_ arguments: [String]) throws {
        guard arguments.first == "help" else { return }
        var subcommands: [ParsableCommand.Type] = GalleyCommand.configuration.subcommands
        for word in arguments.dropFirst() where !word.hasPrefix("-") {
            let names = subcommands.map { Self.name(of: $0) }
            guard let index = names.firstIndex(of: word) else {
                throw ValidationError("no command `\(word)` to give help on; the commands are \(names.joined(separator: ", "))")
            }
            subcommands = subcommands[index].configuration.subcommands
        }
    }

    /// A subcommand's name as the command line spells it.
    static func name(of command: ParsableCommand.Type) -> String {
        command.configuration.commandName ?? command._commandName
    }

    /// Runs the command, mapping argument errors to exit status 2 (ArgumentParser uses 64).
    static func main() {
        // Process-wide settings (docs/architecture.md, rule 10). libarchive's zip times and name
        // conversion read TZ and LC_CTYPE, so they are fixed here, once, before any thread starts.
        ProcessEnvironment.configureForArchives()
        // libvips would set VIPSHOME itself on a pack thread, and load modules Galley has no use for.
        ProcessEnvironment.configureForThumbnails()
        // Large blocks go back to the system when freed, before any thread allocates one.
        FreedMemory.mapLargeBlocks()
        // A file-size limit (`ulimit -f`, a quota) makes a write fail with EFBIG, which Galley
        // reports and cleans up after like a full disk, instead of killing the process mid-file.
        signal(SIGXFSZ, SIG_IGN)
        do {
            try Self.requireKnownHelpTopic(Array(CommandLine.arguments.dropFirst()))
            var command = try parseAsRoot()
            try command.run()
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue)
        } catch {
            let code = exitCode(for: error)
            var message = fullMessage(for: error)
            let advice = dashedTextAdvice(CommandLine.arguments.dropFirst(), message: message)
            if let advice { message += "\nHint: " + advice }
            if code == .success {
                Terminal.standardOutput.write(message + "\n")
                Foundation.exit(0)
            }
            Terminal.standardError.write(message + "\n")
            // A script that asked for JSON gets a JSON document for a bad command line too.
            if wantsJSON(CommandLine.arguments.dropFirst()) {
                let usage = GalleyError(
                    GalleyCommand.message(for: error), id: .usage, hint: advice ?? "`galley help` and `galley COMMAND --help` list the options.")
                Terminal.standardOutput.write(JSONDocument.encode(ErrorDocument(usage)))
            }
            Foundation.exit(code == .validationFailure ? 2 : code.rawValue)
        }
    }
}
