import Foundation

/// Limits a zip must stay under to be read at all: declared sizes, ratios and counts.
public struct ContainerLimits: Sendable {
    /// Entries a zip may list (Dumpling's reader holds 65,535).
    public var maxEntries = 65_535
    /// The sum of the entries' declared uncompressed sizes.
    public var maxTotalBytes: UInt64 = 4 * 1024 * 1024 * 1024
    /// Compression ratio above which an entry (of at least `ratioFloor` bytes) is refused.
    public var maxRatio: UInt64 = 100
    public var ratioFloor: UInt64 = 1024 * 1024
    /// A name's length in bytes.
    public var maxNameBytes = 1024

    public init() {}
}

/// Checks made on the central directory alone, before any content is read.
struct ContainerChecks {
    let path: String
    let limits: ContainerLimits

    func run(_ directory: ZipDirectory, zipFileName: String, into findings: inout Findings) {
        let at = { (entry: ZipDirectory.Entry?) -> SourceLocation in
            SourceLocation(path: entry.map { "\(path)!\($0.displayName)" } ?? path)
        }
        if directory.entries.isEmpty {
            findings.add("zip.empty", "the zip holds no entries", at: at(nil),
                         hint: "Pack the issue again: an issue zip holds at least latest.json.")
            return
        }
        if directory.hasZip64Records {
            findings.add("zip.zip64", "the zip uses Zip64 records, which Dumpling's reader cannot open", at: at(nil),
                         hint: "Repack without Zip64: keep the issue under 4 GiB and 65,535 files.")
        }
        if directory.leadingBytes > 0 {
            findings.add("zip.leading-bytes", "\(directory.leadingBytes) bytes precede the first entry", at: at(nil),
                         hint: "Strip whatever was prepended to the zip; issue zips start with an entry.")
        }
        var totalDeclared: UInt64 = 0
        var ranges: [(start: UInt64, end: UInt64, name: String)] = []
        var seenExact = Set<[UInt8]>()
        var seenFolded: [String: String] = [:]
        var tops: [String] = []

        for entry in directory.entries {
            let name = entry.displayName
            totalDeclared &+= entry.uncompressedSize
            if entry.isEncrypted {
                findings.add("zip.encrypted", "`\(name)` is encrypted", at: at(entry),
                             hint: "Dumpling opens zips without a password: repack without encryption.")
            }
            if entry.method != 0 && entry.method != 8 {
                findings.add("zip.method", "`\(name)` uses compression method \(entry.method); only stored (0) and deflate (8) are safe",
                             at: at(entry), hint: "Repack with deflate, or store the file.")
            }
            if entry.isSymlink {
                findings.add("zip.symlink", "`\(name)` is a symbolic link", at: at(entry),
                             hint: "Replace the link with the file itself: links can point anywhere once extracted.")
            } else if entry.isSpecial {
                findings.add("zip.special-file", "`\(name)` is a device, FIFO or socket, not a file", at: at(entry),
                             hint: "Remove it: an issue zip holds files and folders only.")
            }
            checkName(entry, at: at(entry), into: &findings)

            // Declared sizes and ratios, before anything is inflated.
            if entry.compressedSize > 0, entry.uncompressedSize >= limits.ratioFloor,
               entry.uncompressedSize / max(entry.compressedSize, 1) > limits.maxRatio {
                findings.add("zip.ratio", "`\(name)` declares \(entry.uncompressedSize) bytes from \(entry.compressedSize) (over \(limits.maxRatio):1)",
                             at: at(entry), hint: "This is how zip bombs look; repack the issue from its source.")
            }
            // Local header: inside the file, matching the directory.
            let offset = entry.localHeaderOffset
            if offset >= directory.centralDirectoryOffset {
                findings.add("zip.offset", "`\(name)` starts at \(offset), past the central directory", at: at(entry),
                             hint: "The zip is damaged: pack it again.")
            } else if let headerLength = entry.localHeaderLength {
                if let localName = entry.localName, localName != entry.rawName {
                    findings.add("zip.local-header", "the local header of `\(name)` names `\(String(decoding: localName, as: UTF8.self))`",
                                 at: at(entry), hint: "The zip is damaged or crafted: pack it again.")
                }
                let end = offset + headerLength + entry.compressedSize
                if end > directory.centralDirectoryOffset {
                    findings.add("zip.truncated", "the data of `\(name)` runs past the central directory", at: at(entry),
                                 hint: "The zip is damaged or cut short: pack it again.")
                } else {
                    ranges.append((offset, end, name))
                }
            } else {
                findings.add("zip.local-header", "`\(name)` has no valid local header at offset \(offset)", at: at(entry),
                             hint: "The zip is damaged: pack it again.")
            }
            // Names: duplicates, then collisions under case folding and Unicode normalisation.
            let folded = name.precomposedStringWithCanonicalMapping.lowercased()
            if seenExact.contains(entry.rawName) {
                findings.add("zip.duplicate-name", "`\(name)` appears more than once", at: at(entry),
                             hint: "Keep one entry per name: which one a reader takes is undefined.")
            } else if let other = seenFolded[folded] {
                findings.add("zip.name-collision", "`\(name)` and `\(other)` are the same name on a case-insensitive or normalising file system",
                             at: at(entry), hint: "Rename one of them.")
            }
            seenExact.insert(entry.rawName)
            seenFolded[folded] = seenFolded[folded] ?? name
            let top = name.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            if !tops.contains(top) { tops.append(top) }
        }
        if totalDeclared > limits.maxTotalBytes || entrySizesOverflow(directory) {
            findings.add("zip.size", "the entries declare \(totalDeclared) bytes in all, over the limit of \(limits.maxTotalBytes)",
                         at: at(nil), hint: "An issue zip stays under 4 GiB; this one is damaged or a zip bomb.")
        }
        // Overlapping entries: the data of one inside another's (the overlap zip bomb).
        ranges.sort { $0.start < $1.start }
        for (previous, next) in zip(ranges, ranges.dropFirst()) where next.start < previous.end {
            findings.add("zip.overlap", "the data of `\(next.name)` overlaps `\(previous.name)`", at: SourceLocation(path: "\(path)!\(next.name)"),
                         hint: "This is how overlap zip bombs are built; do not extract it.")
            break
        }
        // One top folder, named after the issue.
        if tops.count != 1 {
            findings.add("zip.top-folder", "the zip has \(tops.count) top-level names (\(tops.prefix(4).map { "`\($0)`" }.joined(separator: ", "))); an issue zip has one folder",
                         at: at(nil), hint: "Put everything inside one folder named after the issue's apple_id.")
        } else if let top = tops.first, !directory.entries.contains(where: { $0.displayName.hasPrefix(top + "/") }) {
            findings.add("zip.top-folder", "`\(top)` is a file, not a folder", at: at(nil),
                         hint: "Put everything inside one folder named after the issue's apple_id.")
        } else if let top = tops.first, !zipFileName.isEmpty, zipFileName != top {
            findings.add("zip.file-name", "the zip is named `\(zipFileName).zip` but its folder is `\(top)`", at: at(nil),
                         hint: "Dumpling loads `<apple_id>.zip`: name the zip after its folder.")
        }
    }

    private func entrySizesOverflow(_ directory: ZipDirectory) -> Bool {
        var total: UInt64 = 0
        for entry in directory.entries {
            let (sum, overflow) = total.addingReportingOverflow(entry.uncompressedSize)
            if overflow { return true }
            total = sum
        }
        return false
    }

    private func checkName(_ entry: ZipDirectory.Entry, at location: SourceLocation, into findings: inout Findings) {
        let before = findings.items.count
        checkNameSafety(entry, at: location, into: &findings)
        let name = entry.displayName
        // Plain-ASCII advice only for names that are otherwise safe.
        guard findings.items.count == before else { return }
        let safe = name.unicodeScalars.allSatisfy {
            $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-/".unicodeScalars.contains($0))
        }
        if !safe {
            findings.add("zip.name-profile", "`\(name)` has characters outside `[A-Za-z0-9._-]`", at: location,
                         hint: "Such names work in Dumpling but not on every file system or server: prefer plain ASCII.")
        }
    }

    private func checkNameSafety(_ entry: ZipDirectory.Entry, at location: SourceLocation, into findings: inout Findings) {
        let raw = entry.rawName
        let name = entry.displayName
        if raw.isEmpty {
            findings.add("zip.name-empty", "an entry has an empty name", at: location, hint: "Remove it or give it a name.")
            return
        }
        if raw.contains(0) {
            findings.add("zip.name-nul", "`\(name)` contains a NUL byte, which hides the rest of the name from readers", at: location,
                         hint: "Rename the entry; names cannot contain NUL.")
        }
        if entry.name == nil {
            findings.add("zip.name-encoding", "an entry name is not valid UTF-8 (`\(name)`)", at: location,
                         hint: "Dumpling decodes names as UTF-8 and fails on this one: rename it in ASCII.")
        }
        if raw.count > limits.maxNameBytes || name.split(separator: "/").contains(where: { $0.utf8.count > 255 }) {
            findings.add("zip.name-length", "`\(name.prefix(60))…` is too long (\(raw.count) bytes)", at: location,
                         hint: "Keep names under 255 bytes a component.")
        }
        if raw.first == UInt8(ascii: "/") || (raw.count >= 2 && raw[1] == UInt8(ascii: ":")) {
            findings.add("zip.path-absolute", "`\(name)` is an absolute path", at: location,
                         hint: "Names are relative to the zip: this one would be written anywhere on disk.")
        }
        if raw.contains(UInt8(ascii: "\\")) {
            findings.add("zip.path-backslash", "`\(name)` contains a backslash, which some readers take as a folder separator",
                         at: location, hint: "Use `/` between folders.")
        }
        let components = name.split(omittingEmptySubsequences: false) { $0 == "/" || $0 == "\\" }
        if components.contains("..") {
            findings.add("zip.path-dotdot", "`\(name)` contains `..` (zip slip: it would be written outside the folder)",
                         at: location, hint: "Never extract this zip with a tool that does not refuse `..`.")
        }
    }
}
