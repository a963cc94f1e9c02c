import Foundation
import Glibc
import GalleyTestSupport
import Testing

/// Runs the built `galley` binary and other programs, and finds the repository's files.
enum Harness {
    /// The package root (three levels up from this file).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let example = root.appending(path: "Examples/winter-2026")
    static let fixtures = root.appending(path: "Tests/Fixtures")
    static let checkScript = root.appending(path: "Tests/Support/check_issue_zip.py")

    /// The `galley` built beside this test bundle (or `$GALLEY_BIN`).
    static var galley: URL {
        if let path = ProcessInfo.processInfo.environment["GALLEY_BIN"] { return URL(fileURLWithPath: path) }
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appending(path: "galley")
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String

        var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
        }
    }

    /// Runs `executable` with `arguments`; output goes through files, so no pipe can fill up.
    @discardableResult
    static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil
    ) throws -> Result {
        let scratch = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appending(path: "out")
        let errURL = scratch.appending(path: "err")
        for url in [outURL, errURL] where !FileManager.default.createFile(atPath: url.path, contents: nil) {
            throw GalleyTestError("cannot make \(url.path) for a command's output")
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "SOURCE_DATE_EPOCH")
        // libvips sets VIPSHOME in this process when a test here makes a thumbnail; galley
        // starts as it would from a shell, where it is not set.
        env.removeValue(forKey: "VIPSHOME")
        env["NO_COLOR"] = "1"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let directory { process.currentDirectoryURL = directory }
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }

    @discardableResult
    static func galley(_ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil) throws
        -> Result
    {
        try run(galley, arguments, environment: environment, in: directory)
    }

    /// Runs `galley` under a limit on the size of the files it writes (bash's `ulimit -f`, in
    /// blocks of 1 KiB): a write past it fails with `EFBIG`, "File too large", as on a full disk,
    /// without filling one.
    static func galley(_ arguments: [String], fileSizeLimit blocks: Int) throws -> Result {
        try tool("bash", ["-c", "ulimit -f \(blocks) && exec \"$0\" \"$@\"", galley.path] + arguments)
    }

    /// Runs a tool found on PATH (`unzip`, `python3`, ...).
    @discardableResult
    static func tool(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        try run(URL(fileURLWithPath: "/usr/bin/env"), [name] + arguments, environment: environment)
    }

    static func temporaryDirectory() throws -> URL {
        let url = Scratch.path("galley-test")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A copy of `source` in a new temporary folder.
    static func copy(_ source: URL) throws -> URL {
        let parent = try temporaryDirectory()
        let target = parent.appending(path: source.lastPathComponent)
        try FileManager.default.copyItem(at: source, to: target)
        return target
    }

    /// Every file under `folder` with its bytes, but SQLite's index files (`StoreSnapshot`).
    static func snapshot(_ folder: String) throws -> [String: Data] { try StoreSnapshot.of(folder) }

    /// Every file below `folder` with the given modification time.
    static func touchAll(_ folder: URL, date: Date) throws {
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: url.path)
        }
    }

    /// Ids of every diagnostic in a `--json` result (errors and warnings).
    static func diagnosticIDs(_ result: Result) -> [String] {
        guard let json = result.json else { return [] }
        if let inputs = json["inputs"] as? [[String: Any]] {  // validate's report
            return inputs.flatMap { ($0["diagnostics"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } }
        }
        return findings(json).compactMap { $0["id"] as? String }
    }

    /// The findings of a `--json` document: the `diagnostics` of an error document, else the
    /// report's `warnings` (pack's and render's summaries).
    static func findings(_ json: [String: Any]?) -> [[String: Any]] {
        (json?["diagnostics"] as? [[String: Any]]) ?? (json?["warnings"] as? [[String: Any]]) ?? []
    }

    /// The `imports` of `galley import --json`.
    static func imports(_ result: Result) -> [[String: Any]] {
        result.json?["imports"] as? [[String: Any]] ?? []
    }
}

/// A test's own failure to set something up, in words.
struct GalleyTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Harness {
    /// A `galley serve` or `galley preview` started with `--json` (in `arguments`) on a
    /// loopback port, once it has said where it listens.
    struct Listening {
        var process: Process
        /// Its listening document, as printed and as parsed.
        var text: Data
        var document: [String: Any]
        var port: Int
        /// Its standard error (access lines, rebuild messages).
        var errors: Pipe

        func stop() { if process.isRunning { process.terminate() } }
    }

    /// What a child process writes to `handle`, read until `enough` says so, the pipe closes or
    /// `seconds` pass: a child that stops writing fails the test that waits on it instead of
    /// hanging the run (`poll` with the time left before each read).
    static func read(_ handle: FileHandle, seconds: TimeInterval = 20, until enough: (Data) -> Bool) -> Data {
        var text = Data()
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !enough(text) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            var ready = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(min(left * 1000, 60_000).rounded(.up)))
            if polled < 0 && errno == EINTR { continue }
            guard polled > 0 else { break }
            let count = Glibc.read(handle.fileDescriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            text.append(contentsOf: buffer[..<count])
        }
        return text
    }

    /// Runs the Python `script` with `arguments`; once it has printed `lines` lines (and waits
    /// on a line of its standard input), runs `meanwhile`, then lets it go on. Returns all it
    /// printed.
    /// Runs a Python script to its end and returns what it printed.
    static func python(_ script: String, _ arguments: [String]) throws -> String {
        try python(script, arguments, pausingAfter: 0) {}
    }

    static func python(_ script: String, _ arguments: [String], pausingAfter lines: Int,
                       meanwhile: () throws -> Void) throws -> String {
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", script] + arguments
        let input = Pipe()
        let output = Pipe()
        python.standardInput = input
        python.standardOutput = output
        try python.run()
        defer { if python.isRunning { python.terminate() } }
        var seen = readLines(output.fileHandleForReading, lines)
        try meanwhile()
        input.fileHandleForWriting.write(Data("go\n".utf8))
        seen += String(decoding: read(output.fileHandleForReading, seconds: 60) { _ in false }, as: UTF8.self)
        python.waitUntilExit()
        return seen
    }

    /// What a child writes to `handle`, up to and including its `count`th line.
    static func readLines(_ handle: FileHandle, _ count: Int) -> String {
        String(decoding: read(handle) { text in text.count { $0 == 10 } >= count }, as: UTF8.self)
    }

    /// Starts `galley ARGUMENTS` and waits (20 s at most) for its listening document.
    static func listening(_ arguments: [String], environment: [String: String]? = nil) throws -> Listening {
        let process = Process()
        process.executableURL = galley
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let text = read(output.fileHandleForReading) { $0.contains(UInt8(ascii: "}")) }
        guard let document = try? JSONSerialization.jsonObject(with: text) as? [String: Any], let port = document["port"] as? Int else {
            process.terminate()
            throw GalleyTestError("galley \(arguments.first ?? "") did not say where it listens: \(String(decoding: text, as: UTF8.self))")
        }
        return Listening(process: process, text: text, document: document, port: port, errors: errors)
    }
}
