import Foundation
import GalleyCore
import GalleyFormats

/// Checks made on the central directory alone, before any content is read.
package struct ContainerChecks {
    package let path: String
    let limits: ContainerLimits
    /// Pack checking the zip it makes: the same findings, with hints for the source's author.
    var packing = false

    /// The gate every reader of a zip passes first (validate, import, render): reads the central
    /// directory with bounded reads and runs the container checks on it. Returns the directory
    /// when it could be read (its findings may still hold errors: bombs, slips, links, damage),
    /// `nil` when it could not, with the reason among the findings. No content is read.
    package func open(into findings: inout Findings) -> ZipDirectory? {
        let at = SourceLocation(path: path)
        let directory: ZipDirectory
        do {
            directory = try ZipDirectory.read(path: path, maxEntries: limits.maxEntries)
        } catch ZipDirectory.ReadError.empty {
            findings.add(.zipEmpty, "the file is empty (0 bytes)", at: at, hint: "Pack the issue again.")
            return nil
        } catch ZipDirectory.ReadError.notAZip {
            findings.add(.zipUnreadable, "not a zip: no end of central directory record", at: at,
                         hint: "Check that this is the issue zip and not, say, an error page saved as .zip.")
            return nil
        } catch ZipDirectory.ReadError.truncated(let reason) {
            findings.add(.zipTruncated, "the zip is damaged: \(reason)", at: at, hint: "Download or pack it again.")
            return nil
        } catch ZipDirectory.ReadError.tooManyEntries(let count) {
            findings.add(.zipEntries, "the zip lists \(count) entries, over the limit of \(limits.maxEntries)", at: at,
                         hint: "An issue zip holds at most 65,535 files.")
            return nil
        } catch {
            findings.add(.zipUnreadable, "cannot be read: \(error)", at: at, hint: "Check the file's permissions.")
            return nil
        }
        let stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        run(directory, zipFileName: stem, into: &findings)
        return directory
    }

    package func run(_ directory: ZipDirectory, zipFileName: String, into findings: inout Findings) {
        let at = { (entry: ZipDirectory.Entry?) -> SourceLocation in
            SourceLocation(path: entry.map { "\(path)!\($0.displayName)" } ?? path)
        }
        if directory.entries.isEmpty {
            findings.add(.zipEmpty, "the zip holds no entries", at: at(nil),
                         hint: "Pack the issue again: an issue zip holds at least latest.json.")
            return
        }
        if directory.hasZip64Records {
            findings.add(.zipZip64, "the zip uses Zip64 records, which Dumpling's reader cannot open", at: at(nil),
                         hint: "Repack without Zip64: keep the issue under 4 GiB and 65,535 files.")
        }
        if directory.leadingBytes > 0 {
            findings.add(.zipLeadingBytes, "\(directory.leadingBytes) bytes precede the first entry", at: at(nil),
                         hint: "Strip whatever was prepended to the zip; issue zips start with an entry.")
        }
        var totalDeclared: UInt64 = 0
        var ranges: [(start: UInt64, end: UInt64, name: String)] = []
        var tops: [String] = []
        let clashes = Self.nameClashes(directory.entries)

        for (number, entry) in directory.entries.enumerated() {
            // Per entry, the name once and its location only for a finding: at 60,000 entries
            // these checks were 0.9 s, mostly strings made for findings never reported and
            // Foundation's case folding and character sets on plain ASCII names.
            let raw = entry.rawName
            let name = entry.displayName
            let location = { at(entry) }
            totalDeclared = ZipDirectory.sum(totalDeclared, entry.uncompressedSize)
            if entry.isEncrypted {
                findings.add(.zipEncrypted, "`\(name)` is encrypted", at: location(),
                             hint: "Dumpling opens zips without a password: repack without encryption.")
            }
            if entry.method != 0 && entry.method != 8 {
                findings.add(.zipMethod, "`\(name)` uses compression method \(entry.method); only stored (0) and deflate (8) are safe",
                             at: location(), hint: "Repack with deflate, or store the file.")
            }
            if entry.isSymlink {
                findings.add(.zipSymlink, "`\(name)` is a symbolic link", at: location(),
                             hint: "Replace the link with the file itself: links can point anywhere once extracted.")
            } else if entry.isSpecial {
                findings.add(.zipSpecialFile, "`\(name)` is a device, FIFO or socket, not a file", at: location(),
                             hint: "Remove it: an issue zip holds files and folders only.")
            }
            checkName(entry, raw: raw, name: name, at: location(), into: &findings)
            if let link = entry.declaredLink {
                findings.add(.zipLinkField, "`\(name)` carries a \(link)", at: location(),
                             hint: "Repack without links: some extractors would create a link that points anywhere.")
            }
            checkDepth(name, at: location(), into: &findings)

            // Declared sizes and ratios, before anything is inflated.
            if entry.compressedSize > 0, entry.uncompressedSize >= limits.ratioFloor,
               entry.uncompressedSize / max(entry.compressedSize, 1) > limits.maxRatio {
                findings.add(.zipRatio, "`\(name)` declares \(entry.uncompressedSize) bytes from \(entry.compressedSize) (over \(limits.maxRatio):1)",
                             at: location(), hint: packing
                                ? "A field or file repeats itself over megabytes (a pasted block, a runaway template): shorten it, or raise `max_ratio` in .galley.yml if it is meant."
                                : "This is how zip bombs look; repack the issue from its source.")
            }
            // Local header: inside the file, matching the directory.
            let offset = entry.localHeaderOffset
            if offset >= directory.centralDirectoryOffset {
                findings.add(.zipOffset, "`\(name)` starts at \(offset), past the central directory", at: location(),
                             hint: "The zip is damaged: pack it again.")
            } else if let end = entry.dataEnd {
                if let localName = entry.differingLocalName {
                    findings.add(.zipLocalHeader, "the local header of `\(name)` names `\(String(decoding: localName, as: UTF8.self))`",
                                 at: location(), hint: "The zip is damaged or crafted: pack it again.")
                }
                if end > directory.centralDirectoryOffset {
                    findings.add(.zipTruncated, "the data of `\(name)` runs past the central directory", at: location(),
                                 hint: "The zip is damaged or cut short: pack it again.")
                } else {
                    ranges.append((offset, end, name))
                }
            } else {
                findings.add(.zipLocalHeader, "`\(name)` has no valid local header at offset \(offset)", at: location(),
                             hint: "The zip is damaged: pack it again.")
            }
            // Names: duplicates, then collisions under case folding and Unicode normalisation.
            switch clashes[number] {
            case .duplicate?:
                findings.add(.zipDuplicateName, "`\(name)` appears more than once", at: location(),
                             hint: "Keep one entry per name: which one a reader takes is undefined.")
            case .collision(let other)?:
                findings.add(.zipNameCollision, "`\(name)` and `\(other)` are the same name on a case-insensitive or normalising file system",
                             at: location(), hint: "Rename one of them.")
            case nil:
                break
            }
            let top = raw.prefix { $0 != UInt8(ascii: "/") }
            if !tops.contains(where: { $0.utf8.elementsEqual(top) }) { tops.append(String(decoding: top, as: UTF8.self)) }
        }
        if totalDeclared > limits.maxTotalBytes {
            let declared = totalDeclared == .max ? "more than 2^64" : "\(totalDeclared)"
            findings.add(.zipSize, "the entries declare \(declared) bytes in all, over the limit of \(limits.maxTotalBytes)",
                         at: at(nil), hint: "An issue zip stays under 4 GiB; this one is damaged or a zip bomb.")
        }
        // Bytes no part of the zip accounts for: an unlisted local entry, a gap, trailing data.
        for range in directory.unaccounted {
            if let orphan = range.orphanName {
                findings.add(.zipUnaccountedBytes, "a local entry `\(orphan)` at offset \(range.offset) is not one the central directory points at",
                             at: at(nil), hint: "Streaming unzippers would extract it: the zip is crafted or damaged; pack it again.")
            } else {
                findings.add(.zipUnaccountedBytes, "\(range.length) bytes at offset \(range.offset) belong to no entry",
                             at: at(nil), hint: "Strip what was inserted or appended, or pack the issue again.")
            }
        }
        // Overlapping entries: the data of one inside another's (the overlap zip bomb).
        ranges.sort { $0.start < $1.start }
        for (previous, next) in zip(ranges, ranges.dropFirst()) where next.start < previous.end {
            findings.add(.zipOverlap, "the data of `\(next.name)` overlaps `\(previous.name)`", at: SourceLocation(path: "\(path)!\(next.name)"),
                         hint: "This is how overlap zip bombs are built; do not extract it.")
            break
        }
        // One top folder, named after the issue.
        if tops.count != 1 {
            findings.add(.zipTopFolder, "the zip has \(tops.count) top-level names (\(tops.prefix(4).map { "`\($0)`" }.joined(separator: ", "))); an issue zip has one folder",
                         at: at(nil), hint: "Put everything inside one folder named after the issue's apple_id.")
        } else if let top = tops.first, !directory.entries.contains(where: { $0.displayName.hasPrefix(top + "/") }) {
            findings.add(.zipTopFolder, "`\(top)` is a file, not a folder", at: at(nil),
                         hint: "Put everything inside one folder named after the issue's apple_id.")
        } else if let top = tops.first, !zipFileName.isEmpty, zipFileName != top {
            findings.add(.zipFileName, "the zip is named `\(zipFileName).zip` but its folder is `\(top)`", at: at(nil),
                         hint: "Dumpling loads `<apple_id>.zip`: name the zip after its folder.")
        }
    }

    /// The checks that need only names and sizes, on a zip not written yet (pack's plan): the
    /// same findings, with the same ids, that `run` would report on the zip once written.
    /// Ratios depend on compression and are checked on the written zip's directory.
    ///
    /// `entries` may be lazy: each entry's name is looked at once, in order, and its location
    /// made only for a finding, so a plan of 60,000 files needs no list of names and locations
    /// beside the plan (one was 21 MB, pack's peak at 30,000 articles).
    ///
    /// Pack's limits leave out what only Zip64 lifts (`Packer.packingLimits`: that is
    /// `pack.zip64-required`'s), so a count or size refused here is over a limit `.galley.yml`
    /// set, and the hints say so.
    package func runPlanned<Entries: Collection<PlannedEntry>>(_ entries: Entries, into findings: inout Findings) {
        if entries.count > limits.maxEntries {
            findings.add(.zipEntries, "the zip would list \(entries.count) entries, over the limit of \(limits.maxEntries)",
                         at: SourceLocation(path: path),
                         hint: "The limit is `max_entries` under `limits:` in .galley.yml: split the issue, or raise it.")
        }
        var total: UInt64 = 0
        for entry in entries {
            total = ZipDirectory.sum(total, entry.size)
            checkNameSafety(raw: Array(entry.name.utf8), name: entry.name, isUTF8: true, at: entry.location(), into: &findings)
            checkDepth(entry.name, at: entry.location(), into: &findings)
        }
        if total > limits.maxTotalBytes {
            findings.add(.zipSize, "the entries would hold \(total) bytes in all, over the limit of \(limits.maxTotalBytes)",
                         at: SourceLocation(path: path),
                         hint: "The limit is `max_total_bytes` under `limits:` in .galley.yml: split the issue, shrink its media, or raise it.")
        }
    }

    private func checkDepth(_ name: String, at location: @autoclosure () -> SourceLocation, into findings: inout Findings) {
        let depth = Self.componentLengths(name.utf8, separatedBy: UInt8(ascii: "/")).count { $0 > 0 }
        if depth > limits.maxDepth {
            findings.add(.zipDepth, "`\(name.prefix(60))…` is nested \(depth) levels deep, over the limit of \(limits.maxDepth)",
                         at: location(), hint: "Keep the issue's files in its folder (at most \(limits.maxDepth - 2) levels of subfolders).")
        }
    }

    private func checkName(_ entry: ZipDirectory.Entry, raw: [UInt8], name: String, at location: @autoclosure () -> SourceLocation,
                           into findings: inout Findings) {
        let before = findings.items.count
        checkNameSafety(raw: raw, name: name, isUTF8: entry.name != nil, at: location(), into: &findings)
        // Plain-ASCII advice only for names that are otherwise safe.
        guard findings.items.count == before else { return }
        let safe = raw.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "/"): true
            default: false
            }
        }
        if !safe {
            findings.add(.zipNameProfile, "`\(name)` has characters outside `[A-Za-z0-9._-]`", at: location(),
                         hint: "Such names work in Dumpling but not on every file system or server: prefer plain ASCII.")
        }
    }

    private func checkNameSafety(raw: [UInt8], name: String, isUTF8: Bool, at location: @autoclosure () -> SourceLocation,
                                 into findings: inout Findings) {
        if raw.isEmpty {
            findings.add(.zipNameEmpty, "an entry has an empty name", at: location(), hint: "Remove it or give it a name.")
            return
        }
        if raw.contains(0) {
            findings.add(.zipNameNul, "`\(name)` contains a NUL byte, which hides the rest of the name from readers", at: location(),
                         hint: "Rename the entry; names cannot contain NUL.")
        }
        if !isUTF8 {
            findings.add(.zipNameEncoding, "an entry name is not valid UTF-8 (`\(name)`)", at: location(),
                         hint: "Dumpling decodes names as UTF-8 and fails on this one: rename it in ASCII.")
        }
        if raw.count > limits.maxNameBytes || Self.componentLengths(raw, separatedBy: UInt8(ascii: "/")).contains(where: { $0 > 255 }) {
            findings.add(.zipNameLength, "`\(name.prefix(60))…` is too long (\(raw.count) bytes)", at: location(),
                         hint: packing ? "Shorten the article folder's or the file's name: the name in the zip joins both, and each part of a name stays under 255 bytes."
                             : "Keep names under 255 bytes a component.")
        }
        if raw.first == UInt8(ascii: "/") || (raw.count >= 2 && raw[1] == UInt8(ascii: ":")) {
            findings.add(.zipPathAbsolute, "`\(name)` is an absolute path", at: location(),
                         hint: "Names are relative to the zip: this one would be written anywhere on disk.")
        }
        if raw.contains(UInt8(ascii: "\\")) {
            findings.add(.zipPathBackslash, "`\(name)` contains a backslash, which some readers take as a folder separator",
                         at: location(), hint: "Use `/` between folders.")
        }
        if Self.hasDotDot(raw) {
            findings.add(.zipPathDotdot, "`\(name)` contains `..` (zip slip: it would be written outside the folder)",
                         at: location(), hint: "Never extract this zip with a tool that does not refuse `..`.")
        }
    }
}

extension ContainerChecks {
    /// The byte lengths of the parts of `bytes` between `separator`s (empty parts included).
    static func componentLengths(_ bytes: some Sequence<UInt8>, separatedBy separator: UInt8) -> [Int] {
        var lengths: [Int] = []
        var current = 0
        for byte in bytes {
            if byte == separator {
                lengths.append(current)
                current = 0
            } else {
                current += 1
            }
        }
        lengths.append(current)
        return lengths
    }

    /// Whether a part of the name between `/` or `\` is `..`, in one pass over its bytes.
    static func hasDotDot(_ bytes: some Sequence<UInt8>) -> Bool {
        // The current part's length while it is all dots; -1 once another byte came.
        var dots = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "/"), UInt8(ascii: "\\"):
                if dots == 2 { return true }
                dots = 0
            case UInt8(ascii: "."): if dots >= 0 { dots += 1 }
            default: dots = -1
            }
        }
        return dots == 2
    }

    /// What an entry's name clashes with.
    enum NameClash: Equatable {
        /// The same bytes as an earlier entry's name.
        case duplicate
        /// Not the same bytes, but the same name once folded (`folded`) as the first entry
        /// whose name folds so, named here.
        case collision(String)
    }

    /// Each entry (by number) whose name repeats an earlier one's exactly or once folded.
    ///
    /// Found by sorting the entry numbers by folded name, so that names that fold alike stand
    /// together, rather than through sets of every name, which kept a byte array, a folded
    /// string and two hash slots per entry (13 MB at 60,000 entries, pack's peak). Plain ASCII
    /// names, nearly all of them, are compared lowered byte by byte without a copy; only the
    /// others have their folded form made, once each.
    static func nameClashes(_ entries: [ZipDirectory.Entry]) -> [Int: NameClash] {
        var plain = [Bool](repeating: true, count: entries.count)
        var foldedOthers: [Int: String] = [:]
        for (number, entry) in entries.enumerated() where !entry.withNameBytes({ $0.allSatisfy { $0 < 0x80 } }) {
            plain[number] = false
            foldedOthers[number] = folded(entry.displayName, raw: entry.rawName)
        }
        /// The folded name as a string, for comparing with a name that is not plain ASCII.
        func key(_ number: Int) -> String {
            foldedOthers[number] ?? folded(entries[number].displayName, raw: entries[number].rawName)
        }
        /// -1, 0 or 1 as `a`'s folded name sorts before, with or after `b`'s. For plain ASCII,
        /// bytes compare as Swift compares such strings; the rest as strings (canonical
        /// equivalence), as the dictionary this replaces compared them.
        func compare(_ a: Int, _ b: Int) -> Int {
            guard plain[a] && plain[b] else {
                let (x, y) = (key(a), key(b))
                return x == y ? 0 : (x < y ? -1 : 1)
            }
            return entries[a].withNameBytes { x in
                entries[b].withNameBytes { y in
                    for (p, q) in zip(x, y) where lowered(p) != lowered(q) { return lowered(p) < lowered(q) ? -1 : 1 }
                    return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
                }
            }
        }
        let order = (0..<entries.count).sorted { a, b in
            let c = compare(a, b)
            return c != 0 ? c < 0 : a < b
        }
        var clashes: [Int: NameClash] = [:]
        var start = 0
        while start < order.count {
            var end = start + 1
            while end < order.count && compare(order[start], order[end]) == 0 { end += 1 }
            // One folded name, its entries in zip order: each after the first repeats an
            // earlier one's bytes, or collides with the first. The bytes seen are kept for this
            // name only, in a set: a hostile zip of 60,000 spellings of one name stays linear.
            if end - start > 1 {
                let first = entries[order[start]]
                var seen: Set<[UInt8]> = [first.rawName]
                for number in order[(start + 1)..<end] {
                    let raw = entries[number].rawName
                    clashes[number] = seen.contains(raw) ? .duplicate : .collision(first.displayName)
                    seen.insert(raw)
                }
            }
            start = end
        }
        return clashes
    }

    /// The name as a case-insensitive, normalising file system compares it: plain ASCII
    /// lowered byte by byte; anything else composed (NFC) and lowered by Foundation.
    static func folded(_ name: String, raw: [UInt8]) -> String {
        guard raw.allSatisfy({ $0 < 0x80 }) else { return name.precomposedStringWithCanonicalMapping.lowercased() }
        return String(decoding: raw.map(lowered), as: UTF8.self)
    }

    /// An ASCII capital as its small letter; any other byte as it is.
    static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}

// MARK: Checks

extension ContainerChecks {
    /// The checks made on the central directory, in catalogue order.
    package static let checks: [Check] = [
        .zipUnreadable,
        .zipEmpty,
        .zipTruncated,
        .zipEntries,
        .zipZip64,
        .zipLeadingBytes,
        .zipEncrypted,
        .zipMethod,
        .zipSymlink,
        .zipSpecialFile,
        .zipLinkField,
        .zipRatio,
        .zipSize,
        .zipOverlap,
        .zipOffset,
        .zipLocalHeader,
        .zipUnaccountedBytes,
        .zipPathAbsolute,
        .zipPathDotdot,
        .zipPathBackslash,
        .zipNameEmpty,
        .zipNameNul,
        .zipNameEncoding,
        .zipNameLength,
        .zipDepth,
        .zipNameProfile,
        .zipDuplicateName,
        .zipNameCollision,
        .zipTopFolder,
        .zipFileName,
        .zipManifestMissing,
        .zipManifestNotFirst,
        .zipCrc,
        .zipSizeMismatch,
        .zipData,
    ]
}

extension Check {
    static let zipUnreadable = Check("zip.unreadable", .container, .error, "The file is not a zip.",
            explanation: "No end of central directory record: the file is something else (an image renamed .zip, HTML from a failed download).",
            triggering: [.fixture("zips/not-a-zip-error.zip")], clean: [.validZip])
    static let zipEmpty = Check("zip.empty", .container, .error, "The file or the zip is empty.",
            explanation: "A zero-byte file, or a zip with no entries: Dumpling imports nothing and says nothing.",
            triggering: [.fixture("zips/empty-file-error.zip"), .fixture("zips/no-entries-error.zip")], clean: [.validZip])
    static let zipTruncated = Check("zip.truncated", .container, .error, "The zip is cut short or its directory lies outside the file.",
            explanation: "The end record or the central directory points past the file, or an entry's data runs past the directory: a partial download or a damaged copy.",
            triggering: [.fixture("zips/truncated-error.zip"), .fixture("zips/cd-out-of-bounds-error.zip")], clean: [.validZip])
    static let zipEntries = Check("zip.entries", .container, .error, "The zip lists more entries than the limit.",
            explanation: "More than 65,535 entries cannot be read without Zip64, and a huge count is a denial-of-service trick; the directory is not read past the limit.",
            triggering: [.fixture("zips/too-many-entries-error.zip")], clean: [.validZip])
    static let zipZip64 = Check("zip.zip64", .container, .error, "The zip uses Zip64 records.",
            explanation: "Dumpling's minizip 1.01h has no Zip64: the issue cannot be opened.",
            triggering: [.fixture("zips/zip64-error.zip")], clean: [.validZip])
    static let zipLeadingBytes = Check("zip.leading-bytes", .container, .warning, "Bytes precede the first entry.",
            explanation: "Data prepended to a zip (a self-extractor stub, junk) is skipped by some readers and makes others find nothing.",
            triggering: [.fixture("zips/prepended-warning.zip")], clean: [.validZip])
    static let zipEncrypted = Check("zip.encrypted", .container, .error, "An entry is encrypted.",
            explanation: "Dumpling opens zips without a password, so an encrypted entry cannot be read.",
            triggering: [.fixture("zips/encrypted-error.zip")], clean: [.validZip])
    static let zipMethod = Check("zip.method", .container, .error, "An entry uses a compression method other than stored or deflate.",
            explanation: "Only methods 0 and 8 are safe in every Dumpling build; bzip2, LZMA and others may not be compiled in.",
            triggering: [.fixture("zips/bzip2-method-error.zip")], clean: [.validZip])
    static let zipSymlink = Check("zip.symlink", .container, .error, "An entry is a symbolic link.",
            explanation: "A link extracted into the issue folder can point at any file on the device; later entries may be written through it.",
            triggering: [.fixture("zips/symlink-error.zip")], clean: [.validZip])
    static let zipSpecialFile = Check("zip.special-file", .container, .error, "An entry is a device, FIFO or socket.",
            explanation: "An issue zip holds files and folders only; anything else is a crafted archive.",
            triggering: [.fixture("zips/device-error.zip")], clean: [.validZip])
    static let zipLinkField = Check("zip.link-field", .container, .error, "An entry's extra field declares a link.",
            explanation: "Zip has no link entry type, but PKWARE's Unix extra field (0x000d) and the ASi Unix field (0x756e) carry a link target that some extractors honour, in the central directory or the local header. Refused like a symbolic link.",
            triggering: [.fixture("zips/link-extra-field-error.zip")], clean: [.validZip])
    static let zipUnaccountedBytes = Check("zip.unaccounted-bytes", .container, .error, "Bytes of the file belong to no listed entry.",
            explanation: "Every byte of an issue zip is a listed entry's header, data or descriptor, the central directory or the end records. A local entry the directory does not list (`../../tmp/x`) is ignored by Galley's reader but written by streaming unzippers, including Dumpling's; gaps and trailing data are how such entries and polyglot files hide. Bytes before the first entry are zip.leading-bytes unless they hold a local entry.",
            triggering: [.fixture("zips/orphan-local-entry-error.zip"), .fixture("zips/trailing-data-error.zip")], clean: [.validZip])
    static let zipDepth = Check("zip.depth", .container, .error, "An entry is nested deeper than the limit.",
            explanation: "An issue is one folder of files (Dumpling reads `<apple_id>/<file_name>`); the limit (`max_depth`, 4 by default: the folder, two levels of subfolders, the file) leaves room for file_name paths such as `images/2026/cover.jpg` and refuses the hundreds of levels that path-length attacks use.",
            triggering: [.fixture("zips/deep-entry-error.zip")], clean: [.validZip])
    static let zipRatio = Check("zip.ratio", .container, .error, "An entry declares a compression ratio past the limit.",
            explanation: "A megabyte-sized entry claiming more than 100 times its compressed size is how zip bombs look; it is refused before anything is inflated.",
            triggering: [.fixture("zips/ratio-bomb-error.zip")], clean: [.validZip])
    static let zipSize = Check("zip.size", .container, .error, "The entries declare more bytes than the limit.",
            explanation: "An issue stays under 4 GiB; a zip declaring hundreds of gigabytes is rejected from its directory, in milliseconds and bounded memory.",
            triggering: [.fixture("zips/declared-500gb-error.zip")], clean: [.validZip])
    static let zipOverlap = Check("zip.overlap", .container, .error, "Entries share the same bytes.",
            explanation: "Overlapping entries are the overlap zip bomb: a small file that inflates to gigabytes. Nothing is extracted.",
            triggering: [.fixture("zips/overlap-bomb-error.zip")], clean: [.validZip])
    static let zipOffset = Check("zip.offset", .container, .error, "An entry starts past the central directory.",
            explanation: "Its local header offset points outside the entry data: the zip is damaged or crafted.",
            triggering: [.fixture("zips/offset-out-of-bounds-error.zip")], clean: [.validZip])
    static let zipLocalHeader = Check("zip.local-header", .container, .error, "An entry's local header is missing or disagrees with the directory.",
            explanation: "Readers that stream from local headers then see another name than readers that use the directory: a way to smuggle files past a check.",
            triggering: [.fixture("zips/local-name-mismatch-error.zip")], clean: [.validZip])
    static let zipPathAbsolute = Check("zip.path-absolute", .container, .error, "An entry name is an absolute path.",
            explanation: "Extracted naively, it is written anywhere on the device.",
            triggering: [.fixture("zips/absolute-path-error.zip")], clean: [.validZip])
    static let zipPathDotdot = Check("zip.path-dotdot", .container, .error, "An entry name contains `..` (zip slip).",
            explanation: "Dumpling's unzipper joins names to the Caches folder without checks: `../../Documents/default.realm` overwrites the app's database.",
            triggering: [.fixture("zips/zip-slip-dotdot-error.zip"), .fixture("zips/zip-slip-backslash-error.zip")], clean: [.validZip])
    static let zipPathBackslash = Check("zip.path-backslash", .container, .error, "An entry name contains a backslash.",
            explanation: "Dumpling and libarchive turn `\\` into `/`, so `..\\..\\x` is a zip slip on some readers and a strange name on others.",
            triggering: [.fixture("zips/zip-slip-backslash-error.zip")], clean: [.validZip])
    static let zipNameEmpty = Check("zip.name-empty", .container, .error, "An entry has an empty name.",
            explanation: "Minizip reads the name's last byte even when it is empty.",
            triggering: [.fixture("zips/empty-name-error.zip")], clean: [.validZip])
    static let zipNameNul = Check("zip.name-nul", .container, .error, "An entry name contains a NUL byte.",
            explanation: "Readers cut the name at NUL, which hides its real name and can create duplicates.",
            triggering: [.fixture("zips/nul-name-error.zip")], clean: [.validZip])
    static let zipNameEncoding = Check("zip.name-encoding", .container, .error, "An entry name is not valid UTF-8.",
            explanation: "Dumpling decodes names as UTF-8; an invalid name becomes nil and breaks extraction.",
            triggering: [.fixture("zips/non-utf8-name-error.zip")], clean: [.validZip])
    static let zipNameLength = Check("zip.name-length", .container, .error, "An entry name is too long.",
            explanation: "Over 255 bytes a component (or 1,024 in all), file systems refuse the name.",
            triggering: [.fixture("zips/long-name-error.zip")], clean: [.validZip])
    static let zipNameProfile = Check("zip.name-profile", .container, .warning, "An entry name has characters outside `[A-Za-z0-9._-]`.",
            explanation: "Dumpling copes, but spaces, `@` and non-ASCII letters break on some servers, CDNs and file systems.",
            triggering: [.fixture("zips/name-with-space-warning.zip")], clean: [.validZip])
    static let zipDuplicateName = Check("zip.duplicate-name", .container, .error, "Two entries have the same name.",
            explanation: "Which copy a reader keeps is undefined, so a check can pass one and an app load the other.",
            triggering: [.fixture("zips/duplicate-name-error.zip")], clean: [.validZip])
    static let zipNameCollision = Check("zip.name-collision", .container, .error, "Two entry names collide under case folding or Unicode normalisation.",
            explanation: "On iOS's case-insensitive file system `Photo.jpg` and `photo.jpg` are one file; `é` and `e\u{301}` too. One overwrites the other.",
            triggering: [.fixture("zips/case-collision-error.zip"), .fixture("zips/nfc-collision-error.zip")], clean: [.validZip])
    static let zipTopFolder = Check("zip.top-folder", .container, .error, "The zip does not hold exactly one top folder.",
            explanation: "Dumpling reads `<apple_id>/latest.json`: files at the top, or several folders, are not found.",
            triggering: [.fixture("zips/two-top-folders-error.zip")], clean: [.validZip])
    package static let zipFileName = Check("zip.file-name", .container, .warning, "The zip's file name differs from its folder.",
            explanation: "Dumpling loads `<apple_id>.zip` from the app bundle; a zip named otherwise is never found.",
            triggering: [.fixture("zips/renamed-warning.zip")], clean: [.validZip])
    static let zipManifestMissing = Check("zip.manifest-missing", .container, .error, "The zip has no `<folder>/latest.json`.",
            explanation: "Without it Dumpling returns silently and the issue never appears.",
            triggering: [.fixture("zips/no-manifest-error.zip")], clean: [.validZip])
    static let zipManifestNotFirst = Check("zip.manifest-not-first", .container, .info, "latest.json is not the first entry.",
            explanation: "Streaming readers find the issue faster when latest.json comes first, as galley pack writes it.",
            triggering: [.fixture("zips/manifest-last-info.zip")], clean: [.validZip])
    package static let zipCrc = Check("zip.crc", .container, .error, "An entry's content does not match its CRC-32.",
            explanation: "The bytes were damaged after packing; found by the full check, which inflates every entry.",
            triggering: [.fixture("zips/bad-crc-error.zip")], clean: [.validZip])
    static let zipSizeMismatch = Check("zip.size-mismatch", .container, .error, "An entry inflates to another size than it declares.",
            explanation: "Declared sizes that lie defeat size limits; the full check stops reading once an entry passes its declared size.",
            triggering: [.fixture("zips/size-lie-error.zip")], clean: [.validZip])
    static let zipData = Check("zip.data", .container, .error, "An entry's data cannot be inflated.",
            explanation: "The deflate stream is damaged or cut short, or it ends before the entry's compressed data does: bytes no inflater reads are a place to hide content.",
            triggering: [.fixture("zips/bad-deflate-error.zip"), .fixture("zips/deflate-trailing-bytes-error.zip")], clean: [.validZip])
}

/// An entry pack is about to write, as `ContainerChecks.runPlanned` sees it: its name in the zip,
/// its size, and where it comes from (made only when a finding needs it).
package struct PlannedEntry {
    package var name: String
    package var size: UInt64
    package var location: () -> SourceLocation

    package init(name: String, size: UInt64, location: @escaping () -> SourceLocation) {
        (self.name, self.size, self.location) = (name, size, location)
    }
}

/// What damage found while a zip's entries are read is reported as, by validate's content pass
/// (and so by import) and by render, which stops there: one check, wording, place and advice.
package enum ContentDamage {
    /// A CRC-32 that does not match (`zip.crc`) or deflate data that cannot be inflated
    /// (`zip.data`), in `entry` (nil: before the first entry was reached).
    package static func unreadable(_ error: ZipEntryReader.ReadError, zip: String, entry: String?) -> Diagnostic {
        Diagnostic(error.isChecksum ? .zipCrc : .zipData, "the content is damaged: \(error.message)",
                   at: SourceLocation(path: entry.map { "\(zip)!\($0)" } ?? zip), hint: "Download or pack the zip again.")
    }

    /// An entry that inflated to `bytes` (nil: more than `limit`, where reading stopped) though
    /// it declares `limit`.
    package static func sizeMismatch(zip: String, entry: String, bytes: Int64?, limit: Int64) -> Diagnostic {
        Diagnostic(.zipSizeMismatch, "`\(entry)` inflates to \(bytes.map { "\($0)" } ?? "more than \(limit)") bytes but declares \(limit)",
                   at: SourceLocation(path: "\(zip)!\(entry)"), hint: "The zip is damaged or crafted: pack it again.")
    }
}
