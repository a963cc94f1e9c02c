import Foundation
import Yams

extension ValidationConfiguration {
    public static let fileName = ".galley.yml"

    /// Reads a `.galley.yml`:
    /// ```yaml
    /// checks:
    ///   zip.name-profile: off        # off, info, warning or error
    ///   manifest.unknown-key: warning
    /// ```
    /// Unknown check ids and settings are errors, so a typo cannot silently switch nothing off.
    public mutating func load(_ url: URL) throws {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else {
            throw GalleyError("cannot read the configuration", path: url.path)
        }
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw GalleyError("the configuration is not valid YAML: \(error)", path: url.path)
        }
        guard let node else { return }
        guard case .mapping(let root) = node else {
            throw GalleyError("the configuration must be a mapping with a `checks` key", path: url.path)
        }
        for (key, value) in root {
            guard key.string == "checks" else {
                throw GalleyError("unknown key `\(key.string ?? "")`", path: url.path, hint: "The only key is `checks`.")
            }
            guard case .mapping(let checks) = value else {
                throw GalleyError("`checks` must map check ids to off, info, warning or error", path: url.path)
            }
            for (id, setting) in checks {
                try set(id.string ?? "", setting.string ?? "", source: "\(url.path):\(id.mark?.line ?? 0)")
            }
        }
        sources.append(url.path)
    }

    /// Sets one check (from `--ignore` or a file).
    public mutating func set(_ id: String, _ value: String, source: String) throws {
        guard CheckCatalog.check(id) != nil else {
            let near = CheckCatalog.all.map(\.id).min { editDistance($0, id) < editDistance($1, id) }
            throw GalleyError("unknown check id `\(id)`", path: source,
                              hint: near.map { "Did you mean `\($0)`? `galley validate --list-checks` lists them all." })
        }
        guard let setting = Setting(rawValue: value.lowercased()) else {
            throw GalleyError("`\(id)` must be off, info, warning or error, not `\(value)`", path: source)
        }
        settings[id] = setting
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
