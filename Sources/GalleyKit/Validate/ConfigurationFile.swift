import Foundation
import Yams
import GalleyCore
import GalleyFormats

extension ValidationConfiguration {
    public static let fileName = ".galley.yml"

    /// Reads a `.galley.yml`:
    /// ```yaml
    /// checks:
    ///   zip.name-profile: off        # off, info, warning or error
    ///   manifest.unknown-key: warning
    /// limits:
    ///   max_entries: 65535           # entries a zip may list
    ///   max_total_bytes: 4294967296  # declared uncompressed bytes in all
    ///   max_ratio: 100               # compression ratio of entries of 1 MiB or more
    ///   max_depth: 4                 # name components of an entry (folder, subfolders, file)
    /// ```
    /// Unknown check ids and settings are errors, so a typo cannot silently switch nothing off.
    public mutating func load(_ url: URL) throws {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else {
            throw GalleyError("cannot read the configuration", id: .configuration, path: url.path)
        }
        let node: Node?
        do {
            node = try YAMLBudget.compose(text)
        } catch let error as YAMLBudget.Exceeded {
            throw GalleyError("the configuration \(error.reason)", id: .configuration, path: "\(url.path):\((error.mark?.line).map(String.init) ?? "1")",
                              hint: "Write the settings out instead of nesting aliases.")
        } catch {
            throw GalleyError("the configuration is not valid YAML: \(error)", id: .configuration, path: url.path)
        }
        guard let node else { return }
        guard case .mapping(let root) = node else {
            throw GalleyError("the configuration must be a mapping with a `checks` key", id: .configuration, path: url.path)
        }
        for (key, value) in root {
            if key.string == "limits" {
                try loadLimits(value, url: url)
                continue
            }
            guard key.string == "checks" else {
                throw GalleyError("unknown key `\(key.string ?? "")`", id: .configuration, path: url.path, hint: "The keys are `checks` and `limits`.")
            }
            guard case .mapping(let checks) = value else {
                throw GalleyError("`checks` must map check ids to off, info, warning or error", id: .configuration, path: url.path)
            }
            for (id, setting) in checks {
                try set(id.string ?? "", setting.string ?? "", source: "\(url.path):\(id.mark?.line ?? 0)")
            }
        }
        sources.append(url.path)
    }

    private mutating func loadLimits(_ node: Node, url: URL) throws {
        guard case .mapping(let mapping) = node else {
            throw GalleyError("`limits` must map limit names to numbers", id: .configuration, path: url.path)
        }
        for (key, value) in mapping {
            let name = key.string ?? ""
            guard let number = value.int, number > 0 else {
                throw GalleyError("the limit `\(name)` must be a positive whole number", id: .configuration, path: "\(url.path):\(key.mark?.line ?? 0)")
            }
            switch name {
            case "max_entries": limits.maxEntries = number
            case "max_total_bytes": limits.maxTotalBytes = UInt64(number)
            case "max_ratio": limits.maxRatio = UInt64(number)
            case "max_depth": limits.maxDepth = number
            default:
                throw GalleyError("unknown limit `\(name)`", id: .configuration, path: "\(url.path):\(key.mark?.line ?? 0)",
                                  hint: "The limits are max_entries, max_total_bytes, max_ratio and max_depth.")
            }
        }
    }

    /// Sets one check (from `--ignore` or a file).
    public mutating func set(_ id: String, _ value: String, source: String) throws {
        guard let check = CheckCatalog.check(CheckID(rawValue: id)) else {
            // A near id only: the nearest of any is no help for `xyz` (as for placeholders and keys).
            let near = nearest(to: id, among: CheckCatalog.all.map(\.id.rawValue), within: max(2, id.count / 3))
            throw GalleyError("unknown check id `\(id)`", id: .configuration, path: source,
                              hint: (near.map { "Did you mean `\($0)`? " } ?? "") + "`galley validate --list-checks` lists them all.")
        }
        guard let setting = Setting(rawValue: value.lowercased()) else {
            throw GalleyError("`\(id)` must be off, info, warning or error, not `\(value)`", id: .configuration, path: source)
        }
        settings[check.id] = setting
    }

    /// The nearest `.galley.yml` from `directory` up to the file system's root.
    public static func find(from directory: URL) -> URL? {
        var current = directory.standardizedFileURL
        while true {
            let candidate = current.appending(path: fileName)
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            let parent = current.deletingLastPathComponent()
            if parent.path == current.path { return nil }
            current = parent
        }
    }
}

extension ValidationConfiguration {
    /// What a run uses: `configFile` (or else the nearest `.galley.yml` from `directory` upwards),
    /// then `ignored` switched off. Unknown ids and settings are errors.
    public static func resolve(configFile: String?, ignored: [String], from directory: URL) throws -> ValidationConfiguration {
        var configuration = ValidationConfiguration()
        if let configFile {
            try configuration.load(URL(fileURLWithPath: configFile))
        } else if let found = find(from: directory) {
            try configuration.load(found)
        }
        for id in ignored { try configuration.set(id, "off", source: "--ignore") }
        return configuration
    }
}
