import ArgumentParser
import Foundation
import GalleyCore
import GalleySigning

struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Make the key pair that signs a feed.", subcommands: [Generate.self])

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Write a new Ed25519 key pair: NAME.key for serve --signing-key, NAME.pub for sync --trust-key.",
            discussion: """
                The private key (NAME.key) is written readable by you only (mode 600): keep it on \
                the server, out of the store and of any web root. Give NAME.pub to every reader \
                that syncs; galley sync --trust-key then refuses a feed that is unsigned or signed \
                by another key. The key id printed (16 hex digits) names the key in each \
                Galley-Signature header. With --json: {"private_key", "public_key", "key_id"} \
                (docs/json/keys.schema.json).

                Examples:
                  galley keys generate --output /etc/galley
                  galley serve --store store --signing-key /etc/galley/feed.key
                  galley sync https://issues.example.com/feed --trust-key feed.pub
                """)

        @Option(name: [.short, .long], help: ArgumentHelp("The folder to write the pair into.", valueName: "dir"),
                completion: .directory)
        var output = "."

        @Option(help: "The files' name: NAME.key and NAME.pub.")
        var name = "feed"

        @Flag(help: "Replace an existing pair.")
        var force = false

        @OptionGroup var outputOptions: OutputOptions

        func run() throws {
            let console = outputOptions.console
            try console.run {
                let keys = try GeneratedKeys.generate(in: URL(fileURLWithPath: output), name: name, force: force)
                if outputOptions.json { return console.emit(keys) }
                console.status("wrote \(keys.privateKey) (private: serve --signing-key) and \(keys.publicKey) (public: sync --trust-key)")
                console.status("key id \(keys.keyID)")
            }
        }
    }
}
