import Foundation
import GalleyCore

/// A zip's central directory, read with bounded reads from the end of the file, before a
/// single byte of content is inflated. A zip declaring 500 GB is read in milliseconds.
public struct ZipDirectory: Sendable {
    /// One entry of the central directory. Kept for every entry (60,000 at 30,000 articles)
    /// while a zip is checked and imported, so it is small: the often-used fields in the
    /// smallest types that hold every value the format allows, and what only a damaged or
    /// hostile zip has (a name that is not UTF-8, a local header naming another file, a link
    /// in an extra field) in one box that ordinary entries do not have. 72 bytes, not 120.
    public struct Entry: Sendable {
        /// The name decoded as UTF-8, or `nil` when it is not valid UTF-8.
        public var name: String?
        private var rare: Rare?
        public var compressedSize: UInt64
        public var uncompressedSize: UInt64
        public var localHeaderOffset: UInt64
        public var crc32: UInt32
        public var externalAttributes: UInt32
        /// 0 until the local header was read (a header is at least 30 bytes).
        private var localHeaderLength32: UInt32 = 0
        public var versionMadeBy: UInt16
        public var flags: UInt16
        public var method: UInt16
        private var descriptorLength8: UInt8 = 0
        /// Whether sizes or offsets are in a Zip64 extra field.
        public var usesZip64: Bool

        /// What ordinary entries do not have.
        private struct RareFields: Sendable {
            var undecodedName: [UInt8]?
            var differingLocalName: [UInt8]?
            var declaredLink: String?
            var isEmpty: Bool { undecodedName == nil && differingLocalName == nil && declaredLink == nil }
        }

        /// The box for them: immutable, so an entry's copies never share a change.
        private final class Rare: Sendable {
            let fields: RareFields
            init(_ fields: RareFields) { self.fields = fields }
        }

        /// Changes the rare fields, keeping no box when none is set.
        private mutating func changeRare(_ change: (inout RareFields) -> Void) {
            var fields = rare?.fields ?? RareFields()
            change(&fields)
            rare = fields.isEmpty ? nil : Rare(fields)
        }

        init(name: String?, undecodedName: [UInt8]?, versionMadeBy: UInt16, flags: UInt16, method: UInt16, crc32: UInt32,
             compressedSize: UInt64, uncompressedSize: UInt64, localHeaderOffset: UInt64, externalAttributes: UInt32) {
            self.name = name
            self.compressedSize = compressedSize
            self.uncompressedSize = uncompressedSize
            self.localHeaderOffset = localHeaderOffset
            self.crc32 = crc32
            self.externalAttributes = externalAttributes
            self.versionMadeBy = versionMadeBy
            self.flags = flags
            self.method = method
            usesZip64 = false
            if let undecodedName { changeRare { $0.undecodedName = undecodedName } }
        }

        /// The name's bytes when they are not valid UTF-8 (else `name` holds them): one copy of
        /// each name, not two.
        fileprivate var undecodedName: [UInt8]? { rare?.fields.undecodedName }
        /// The name's raw bytes, as stored.
        public var rawName: [UInt8] { undecodedName ?? Array((name ?? "").utf8) }
        /// The name's length in bytes.
        package var nameLength: Int { undecodedName?.count ?? name?.utf8.count ?? 0 }

        /// Calls `body` with the name's bytes, as stored, without copying them.
        package func withNameBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
            if let undecodedName { return try undecodedName.withUnsafeBufferPointer(body) }
            // (Not `withContiguousStorageIfAvailable`, as `compareName` reads it: called from
            // another module, unspecialized, that made the name-clash check twice as slow.)
            var name = self.name ?? ""
            return try name.withUTF8(body)
        }

        /// Calls `body` with the bytes of `displayName`: the name as stored, or, for a name
        /// that is not UTF-8 (refused by the container checks, so rare), its repaired text.
        func withDisplayNameBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
            guard undecodedName != nil else { return try withNameBytes(body) }
            var display = displayName
            return try display.withUTF8(body)
        }

        /// The order of the name's bytes from `offset` on against `other` (memcmp's, then the
        /// shorter first): negative, 0 or positive.
        @inline(__always)
        func compareName(from offset: Int, with other: UnsafeBufferPointer<UInt8>) -> Int {
            func order(_ name: UnsafeBufferPointer<UInt8>) -> Int {
                let mine = UnsafeBufferPointer(rebasing: name[min(offset, name.count)...])
                let common = min(mine.count, other.count)
                guard common > 0, let a = mine.baseAddress, let b = other.baseAddress else { return mine.count - other.count }
                let order = memcmp(a, b, common)
                return order != 0 ? Int(order) : mine.count - other.count
            }
            if let undecodedName { return undecodedName.withUnsafeBufferPointer(order) }
            // Read in place when the string is contiguous (every name read from a directory
            // is): a copy of it to call `withUTF8` was a retain and a release at every probe.
            if let order = name?.utf8.withContiguousStorageIfAvailable(order) { return order }
            var name = self.name ?? ""
            return name.withUTF8(order)
        }

        /// Whether `bytes` are the name's bytes (without making an array of them).
        func isNamed(_ bytes: some Sequence<UInt8>) -> Bool {
            undecodedName.map { bytes.elementsEqual($0) } ?? bytes.elementsEqual((name ?? "").utf8)
        }

        /// The local header's length (30 + name + extra), once it has been read.
        public var localHeaderLength: UInt64? {
            get { localHeaderLength32 == 0 ? nil : UInt64(localHeaderLength32) }
            set { localHeaderLength32 = newValue.map { UInt32(clamping: $0) } ?? 0 }
        }
        /// The local header's name, once it has been read, when it differs from the directory's.
        public var differingLocalName: [UInt8]? {
            get { rare?.fields.differingLocalName }
            set { changeRare { $0.differingLocalName = newValue } }
        }
        /// Bytes of the data descriptor after the data (flag bit 3), once it has been read.
        public var descriptorLength: UInt64 {
            get { UInt64(descriptorLength8) }
            set { descriptorLength8 = UInt8(clamping: newValue) }
        }

        /// Where the entry's data ends (local header, then `compressedSize` bytes), once the
        /// local header has been read; `UInt64.max` when the sum overflows (a crafted size).
        public var dataEnd: UInt64? {
            localHeaderLength.map { ZipDirectory.sum(localHeaderOffset, $0, compressedSize) }
        }

        /// The extra field that declares a link, in the central directory or the local header
        /// (once it has been read), when there is one. Zip has no link entry type, but two Unix
        /// extra fields carry a link target that some extractors honour (Info-ZIP's `unzip`, for
        /// one): PKWARE's Unix field (0x000d: times, uid and gid in 12 bytes, then the target)
        /// and the ASi Unix field (0x756e: CRC, mode, size, uid and gid in 14 bytes, then the
        /// target; or a link mode). Worked out as the directory is read: the extra fields
        /// themselves are not kept (two arrays an entry were 10 MB of a 60,000-entry zip's
        /// checks, for what is nil in all but a hostile zip).
        public var declaredLink: String? {
            get { rare?.fields.declaredLink }
            set { changeRare { $0.declaredLink = newValue } }
        }

        public var isEncrypted: Bool { flags & 1 != 0 }
        public var isDirectory: Bool { (undecodedName?.last ?? name?.utf8.last) == UInt8(ascii: "/") }
        public var displayName: String { name ?? String(decoding: rawName, as: UTF8.self) }

        /// The Unix file type from the external attributes, when the zip was made on Unix.
        public var unixMode: UInt32? {
            let system = versionMadeBy >> 8
            guard system == 3 || system == 19 else { return nil }  // Unix, OS X
            let mode = externalAttributes >> 16
            return mode == 0 ? nil : mode
        }

        public var isSymlink: Bool { unixMode.map { $0 & 0o170000 == 0o120000 } ?? false }


        /// A device, FIFO or socket (anything but a file, folder or link).
        public var isSpecial: Bool {
            guard let mode = unixMode else { return false }
            let type = mode & 0o170000
            return type != 0o100000 && type != 0o040000 && type != 0o120000 && type != 0
        }
    }

    public var fileSize: UInt64
    public var entries: [Entry]
    public var centralDirectoryOffset: UInt64
    public var centralDirectorySize: UInt64
    public var hasZip64Records: Bool
    /// Bytes before the first local header (a self-extractor stub, or junk).
    public var leadingBytes: UInt64
    /// Byte ranges that no part of the zip accounts for (not a listed entry's header, data or
    /// descriptor, the central directory, or the end records), leading bytes excepted, in
    /// file order. Streaming extractors read what sits there.
    public var unaccounted: [Unaccounted] = []
    /// The file this directory was read from, as it stood when it was opened: a reader that
    /// must see the same bytes compares it with what the path names later.
    package var identity: FileIdentity?

    /// The first name component of the first entry: the folder, once the container
    /// checks have found one top folder.
    public var topFolder: String? { entries.first?.displayName.split(separator: "/").first.map(String.init) }

    /// A range of the file nothing accounts for.
    public struct Unaccounted: Sendable, Equatable {
        public var offset: UInt64
        public var length: UInt64
        /// The name in a local file header found at the start of the range (an entry the
        /// central directory does not list), when there is one.
        public var orphanName: String?
    }

    public enum ReadError: Error, Sendable, Equatable {
        case empty
        case notAZip
        case truncated(String)
        case tooManyEntries(UInt64)
    }

    /// The numbers of the files in `folder` (entries under `folder/`, folders themselves left
    /// out), in the order of their names' bytes after `folder/` (memcmp's, the shorter first):
    /// the list `entry(named:from:in:)` searches. A name outside the folder is never taken for
    /// one inside (`other/a.txt` is not `a.txt`).
    ///
    /// Here rather than in the caller's module: a call from another module to an entry's
    /// method copied the entry first (its strings retained and released), and the generic
    /// `withNameBytes` ran unspecialized there (type metadata looked up at every call). The
    /// lookups by name probe 16 names for each of 60,000 files: ~0.1 s of the reference and
    /// media checks at 30,000 articles.
    package func fileNumbersByName(in folder: String) -> [Int32] {
        let prefix = Array((folder + "/").utf8)
        let offset = prefix.count
        return entries.withUnsafeBufferPointer { entries in
            var numbers: [Int32] = []
            numbers.reserveCapacity(entries.count)
            for number in entries.indices where !entries[number].isDirectory && entries[number].nameLength > offset {
                if entries[number].withNameBytes({ $0.starts(with: prefix) }) { numbers.append(Int32(number)) }
            }
            numbers.sort { a, b in
                entries[Int(b)].withNameBytes { entries[Int(a)].compareName(from: offset, with: UnsafeBufferPointer(rebasing: $0[offset...])) } < 0
            }
            return numbers
        }
    }

    /// The number of the entry among `sorted` (`fileNumbersByName`'s list, whose folder and
    /// slash are `offset` bytes) whose name from `offset` on is `wanted`, if there is one.
    package func entry(named wanted: UnsafeBufferPointer<UInt8>, from offset: Int, in sorted: [Int32]) -> Int? {
        entries.withUnsafeBufferPointer { entries in
            var low = 0
            var high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                let order = entries[Int(sorted[middle])].compareName(from: offset, with: wanted)
                if order == 0 { return Int(sorted[middle]) }
                if order < 0 { low = middle + 1 } else { high = middle }
            }
            return nil
        }
    }

    /// How many of the entries `files` are named as a file in a folder: their display name
    /// split at its first `/` (empty parts left out, as `split(separator: "/", maxSplits: 1)`
    /// leaves them) gives two parts. Read from the name's bytes, here beside the entries: made
    /// of `split`'s substrings it was a tenth of a 30,000-article import's gate.
    package func filesInAFolder(_ files: [Int]) -> Int {
        let slash = UInt8(ascii: "/")
        return entries.withUnsafeBufferPointer { entries in
            files.count { number in
                entries[number].withDisplayNameBytes { name in
                    // Leading slashes make empty parts; the first part is what follows them.
                    guard let start = name.firstIndex(where: { $0 != slash }),
                          let cut = name[start...].firstIndex(of: slash) else { return false }
                    return cut + 1 < name.count
                }
            }
        }
    }

    /// SHA-256 of one line per entry of `files`, `name<TAB>crc32 in hex<TAB>size<LF>` (the
    /// display name; the CRC-32 and size the directory gives), the lines in byte order, as hex:
    /// what the zip holds, whatever its entries' times (the store's `contentDigest`, compared
    /// with the next import's, so it never changes). Each line starts with the name and a tab:
    /// names compare byte by byte, and where one is the other's beginning, the tab after it
    /// against the other's next byte. The lines are never all made (60,000 at 30,000 articles):
    /// each goes into one buffer, hashed as it fills.
    package func fileLinesDigest(_ files: [Int]) -> String {
        let tab = UInt8(ascii: "\t")
        return entries.withUnsafeBufferPointer { entries in
            let order = files.indices.sorted { a, b in
                entries[files[a]].withDisplayNameBytes { x in
                    entries[files[b]].withDisplayNameBytes { y in
                        let common = min(x.count, y.count)
                        if common > 0, let p = x.baseAddress, let q = y.baseAddress {
                            let order = memcmp(p, q, common)
                            if order != 0 { return order < 0 }
                        }
                        if x.count < y.count { return tab < y[common] }
                        if y.count < x.count { return x[common] < tab }
                        return false
                    }
                }
            }
            let hasher = SHA256Hasher()
            var buffer: [UInt8] = []
            buffer.reserveCapacity(1 << 16)
            for position in order {
                let entry = entries[files[position]]
                entry.withDisplayNameBytes { buffer.append(contentsOf: $0) }
                buffer.append(tab)
                buffer.append(contentsOf: String(entry.crc32, radix: 16).utf8)
                buffer.append(tab)
                buffer.append(contentsOf: String(entry.uncompressedSize).utf8)
                buffer.append(UInt8(ascii: "\n"))
                if buffer.count >= 1 << 16 - 1024 {
                    hasher.update(buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            hasher.update(buffer)
            return hasher.finalizeHex()
        }
    }

    /// Reads the directory of the zip at `path`. Problems that make the rest unreadable throw;
    /// the others are left for `ContainerChecks` to report.
    public static func read(path: String, maxEntries: Int) throws -> ZipDirectory {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw GalleyError("cannot open the file", id: .inputUnreadable, path: path, hint: "Check that it exists and is readable.")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw GalleyError("cannot read the file: \(String(cString: strerror(errno)))", id: .inputUnreadable, path: path)
        }
        let fileSize = UInt64(max(status.st_size, 0))
        if fileSize == 0 { throw ReadError.empty }
        // `pread`, not a FileHandle's seek and read: the local headers below are read once per
        // entry, and at 60,000 entries Foundation's seek, Data and copy were a tenth of an
        // import's time. Fewer bytes come back only at the end of the file.
        func read(_ offset: UInt64, _ count: Int) throws -> [UInt8] {
            do {
                return try readAll(fd, at: offset, count: count)
            } catch let error as POSIXError {
                throw GalleyError("cannot read the file: \(String(cString: strerror(error.code.rawValue)))", id: .inputUnreadable, path: path)
            }
        }

        // End of central directory: the last 22..65557 bytes.
        let tailLength = Int(min(fileSize, 22 + 65_535))
        let tail = try read(fileSize - UInt64(tailLength), tailLength)
        var eocd: Int?
        var position = tail.count - 22
        while position >= 0 {
            if tail[position] == 0x50, tail[position + 1] == 0x4B, tail[position + 2] == 0x05, tail[position + 3] == 0x06 {
                eocd = position
                break
            }
            position -= 1
        }
        guard let e = eocd else {
            let head = try read(0, 4)
            if head == [0x50, 0x4B, 0x03, 0x04] { throw ReadError.truncated("the end of central directory record is missing") }
            throw ReadError.notAZip
        }
        let eocdOffset = fileSize - UInt64(tailLength) + UInt64(e)
        let totalEntries = UInt64(le16(tail, e + 10))
        var cdSize = UInt64(le32(tail, e + 12))
        var cdOffset = UInt64(le32(tail, e + 16))
        var entryCount = totalEntries
        var zip64 = false
        // The Zip64 end records (the locator right before the EOCD, and the record it points
        // at), as byte ranges for the accounting below.
        var zip64Ranges: [(start: UInt64, end: UInt64)] = []
        if eocdOffset >= 20 {
            let locator = try read(eocdOffset - 20, 20)
            if locator.count == 20, le32(locator, 0) == 0x0706_4B50 {
                zip64 = true
                zip64Ranges.append((eocdOffset - 20, eocdOffset))
                let zip64EOCD = le64(locator, 8)
                if sum(zip64EOCD, 56) <= fileSize {
                    let record = try read(zip64EOCD, 56)
                    if record.count == 56, le32(record, 0) == 0x0606_4B50 {
                        entryCount = le64(record, 32)
                        cdSize = le64(record, 40)
                        cdOffset = le64(record, 48)
                        zip64Ranges.append((zip64EOCD, min(sum(zip64EOCD, 12, le64(record, 4)), fileSize)))
                    }
                }
            }
        }
        if totalEntries == 0xFFFF || cdSize == 0xFFFF_FFFF || cdOffset == 0xFFFF_FFFF { zip64 = true }
        guard entryCount <= UInt64(maxEntries) else { throw ReadError.tooManyEntries(entryCount) }
        guard cdOffset <= eocdOffset, cdSize <= eocdOffset - cdOffset else {
            throw ReadError.truncated("the central directory lies outside the file (offset \(cdOffset), size \(cdSize))")
        }
        // Data before the directory that the directory does not account for (prepended bytes).
        let directory = try read(cdOffset, Int(cdSize))
        guard directory.count == Int(cdSize) else { throw ReadError.truncated("the central directory is cut short") }

        var entries: [Entry] = []
        entries.reserveCapacity(Int(min(entryCount, 100_000)))
        var p = 0
        while p + 46 <= directory.count && entries.count < Int(entryCount) {
            guard le32(directory, p) == 0x0201_4B50 else {
                throw ReadError.truncated("entry \(entries.count + 1) of the central directory has a bad signature")
            }
            let nameLength = Int(le16(directory, p + 28))
            let extraLength = Int(le16(directory, p + 30))
            let commentLength = Int(le16(directory, p + 32))
            guard p + 46 + nameLength + extraLength + commentLength <= directory.count else {
                throw ReadError.truncated("entry \(entries.count + 1) of the central directory is cut short")
            }
            let rawName = Array(directory[(p + 46)..<(p + 46 + nameLength)])
            let extra = Array(directory[(p + 46 + nameLength)..<(p + 46 + nameLength + extraLength)])
            let name = String(validating: rawName, as: UTF8.self)
            var entry = Entry(
                name: name, undecodedName: name == nil ? rawName : nil,
                versionMadeBy: le16(directory, p + 4), flags: le16(directory, p + 8), method: le16(directory, p + 10),
                crc32: le32(directory, p + 16), compressedSize: UInt64(le32(directory, p + 20)),
                uncompressedSize: UInt64(le32(directory, p + 24)), localHeaderOffset: UInt64(le32(directory, p + 42)),
                externalAttributes: le32(directory, p + 38))
            applyZip64Extra(&entry, extra)
            if let link = linkDeclared(in: extra) { entry.declaredLink = link }
            entries.append(entry)
            p += 46 + nameLength + extraLength + commentLength
        }
        if entries.count < Int(entryCount) {
            throw ReadError.truncated("the central directory lists \(entries.count) of \(entryCount) entries")
        }

        // Local headers: 30 bytes plus the name and extra field each, to know where data starts,
        // compare names and see extra fields; then the data descriptor after the data, if any.
        //
        // Both are read through a window: a writer that streams (libarchive, so `galley pack`)
        // ends every entry with a descriptor, and the next entry's header follows it, so one
        // `pread` at the descriptor answers both (60,000 fewer at 30,000 articles). Each read
        // takes what it needs and what the next one will (`ahead`), not a fixed 1 KiB: at
        // 60,000 entries the kernel's copy of the rest was a fifth of reading the directory.
        // What each read returns is what a `pread` of its own would: the bytes asked for,
        // fewer only at the end of the file.
        var window: (offset: UInt64, bytes: [UInt8]) = (0, [])
        func readNear(_ offset: UInt64, _ count: Int, ahead: Int) throws -> [UInt8] {
            if offset >= window.offset, offset - window.offset <= UInt64(window.bytes.count) {
                let start = Int(offset - window.offset)
                if window.bytes.count - start >= count || window.offset + UInt64(window.bytes.count) >= fileSize {
                    return Array(window.bytes[start..<min(start + count, window.bytes.count)])
                }
            }
            window = (offset, try read(offset, max(count, ahead)))
            return Array(window.bytes.prefix(count))
        }
        var covered: [(start: UInt64, end: UInt64)] = []
        for index in entries.indices {
            let offset = entries[index].localHeaderOffset
            guard sum(offset, 30) <= cdOffset else { continue }
            // One read for the header, its name and (usually) its extra field: the directory's
            // name length, and room for a local extra field up to 64 bytes.
            let guess = 30 + entries[index].nameLength + 64
            let head = try readNear(offset, Int(min(UInt64(guess), cdOffset - offset)), ahead: 256)
            guard head.count >= 30, le32(head, 0) == 0x0403_4B50 else { continue }
            let nameLength = Int(le16(head, 26))
            let extraLength = Int(le16(head, 28))
            let headerLength = 30 + UInt64(nameLength) + UInt64(extraLength)
            entries[index].localHeaderLength = headerLength
            let variable = head.count >= 30 + nameLength + extraLength
                ? Array(head[30..<(30 + nameLength + extraLength)])
                : try readNear(offset + 30, nameLength + extraLength, ahead: 0)
            if !entries[index].isNamed(variable.prefix(nameLength)) {
                entries[index].differingLocalName = Array(variable.prefix(nameLength))
            }
            let localExtra = Array(variable.dropFirst(nameLength))
            if entries[index].declaredLink == nil, let link = linkDeclared(in: localExtra) {
                entries[index].declaredLink = link
            }
            // A Zip64 field in the local header alone (a writer that did not know the size when
            // it began the entry) still makes the data descriptor's sizes 8 bytes each
            // (APPNOTE 4.3.9.2).
            if !entries[index].usesZip64, hasExtraField(0x0001, in: localExtra) {
                entries[index].usesZip64 = true
            }
            let dataEnd = entries[index].dataEnd ?? cdOffset
            if entries[index].flags & 0x8 != 0, dataEnd < cdOffset {
                // crc, sizes (8 bytes each with Zip64), after an optional signature.
                let sizes: UInt64 = entries[index].usesZip64 ? 16 : 8
                // The descriptor (24 bytes at most), and the next entry's header as the one
                // read above reads it.
                let next = index + 1 < entries.count ? entries[index + 1].nameLength : 0
                let start = try readNear(dataEnd, 4, ahead: 24 + 30 + next + 64)
                let signed = start.count == 4 && le32(start, 0) == 0x0807_4B50
                entries[index].descriptorLength = min((signed ? 8 : 4) + sizes, cdOffset - dataEnd)
            }
            covered.append((offset, min(sum(dataEnd, entries[index].descriptorLength), cdOffset)))
        }
        let firstOffset = entries.map(\.localHeaderOffset).min() ?? cdOffset
        // The directory, the Zip64 end records when present, and the end record with its comment.
        covered.append((cdOffset, cdOffset + cdSize))
        covered += zip64Ranges
        let commentLength = UInt64(le16(tail, e + 20))
        covered.append((eocdOffset, min(eocdOffset + 22 + commentLength, fileSize)))
        var unaccounted: [Unaccounted] = []
        var reached = firstOffset
        for range in covered.sorted(by: { $0.start < $1.start }) {
            if range.start > reached {
                unaccounted.append(Unaccounted(offset: reached, length: range.start - reached,
                                               orphanName: try orphanName(at: reached, read: read)))
            }
            reached = max(reached, range.end)
        }
        if fileSize > reached {
            unaccounted.append(Unaccounted(offset: reached, length: fileSize - reached, orphanName: try orphanName(at: reached, read: read)))
        }
        if firstOffset > 0, let name = try orphanName(at: 0, read: read) {
            unaccounted.insert(Unaccounted(offset: 0, length: firstOffset, orphanName: name), at: 0)
        }
        return ZipDirectory(
            fileSize: fileSize, entries: entries, centralDirectoryOffset: cdOffset, centralDirectorySize: cdSize,
            hasZip64Records: zip64 || entries.contains(where: \.usesZip64), leadingBytes: firstOffset,
            unaccounted: unaccounted, identity: FileIdentity(status))
    }

    /// The name in the local file header at `offset`, when one starts there.
    private static func orphanName(at offset: UInt64, read: (UInt64, Int) throws -> [UInt8]) throws -> String? {
        let header = try read(offset, 30)
        guard header.count == 30, le32(header, 0) == 0x0403_4B50 else { return nil }
        let name = try read(offset + 30, Int(le16(header, 26)))
        return String(decoding: name, as: UTF8.self)
    }

    /// Whether an extra field holds a field of `id`, found without copying any (it runs for
    /// every entry's local header).
    static func hasExtraField(_ id: UInt16, in extra: [UInt8]) -> Bool {
        var found = false
        eachExtraField(extra) { fieldID, _ in
            found = fieldID == id
            return !found
        }
        return found
    }

    /// Walks an extra field's (id, data range) pairs until `body` says stop or a field is cut
    /// short.
    private static func eachExtraField(_ extra: [UInt8], _ body: (UInt16, Range<Int>) -> Bool) {
        var p = 0
        while p + 4 <= extra.count {
            let size = Int(le16(extra, p + 2))
            guard p + 4 + size <= extra.count, body(le16(extra, p), (p + 4)..<(p + 4 + size)) else { return }
            p += 4 + size
        }
    }

    /// What `Entry.declaredLink` says of one extra field.
    /// (Walked in place: the fields as arrays were an allocation or two for each of 60,000
    /// entries, read twice.)
    private static func linkDeclared(in extra: [UInt8]) -> String? {
        var declared: String?
        eachExtraField(extra) { id, data in
            if id == 0x000D, data.count > 12 {
                declared = "PKWARE Unix extra field (0x000d) with a link target"
            } else if id == 0x756E, data.count >= 6 {
                let mode = UInt32(le16(extra, data.lowerBound + 4))
                if data.count > 14 || mode & 0o170000 == 0o120000 { declared = "ASi Unix extra field (0x756e) declaring a link" }
            }
            return declared == nil
        }
        return declared
    }

    /// Takes the sizes and offset that the Zip64 extra field (0x0001) holds for the fields
    /// marked 0xFFFFFFFF, in the order the format gives them.
    private static func applyZip64Extra(_ entry: inout Entry, _ extra: [UInt8]) {
        eachExtraField(extra) { id, data in
            guard id == 0x0001 else { return true }
            entry.usesZip64 = true
            var q = data.lowerBound
            func next(_ value: inout UInt64) {
                guard value == 0xFFFF_FFFF, q + 8 <= data.upperBound else { return }
                value = le64(extra, q)
                q += 8
            }
            next(&entry.uncompressedSize)
            next(&entry.compressedSize)
            next(&entry.localHeaderOffset)
            return true
        }
    }

    /// The sum of offsets and sizes read from the file, `UInt64.max` when it overflows: they are
    /// the attacker's numbers, and an overflow must be a finding, never a trap.
    package static func sum(_ values: UInt64...) -> UInt64 {
        var total: UInt64 = 0
        for value in values {
            let (next, overflow) = total.addingReportingOverflow(value)
            if overflow { return .max }
            total = next
        }
        return total
    }

    static func le16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
    static func le32(_ b: [UInt8], _ i: Int) -> UInt32 { UInt32(le16(b, i)) | UInt32(le16(b, i + 2)) << 16 }
    static func le64(_ b: [UInt8], _ i: Int) -> UInt64 { UInt64(le32(b, i)) | UInt64(le32(b, i + 4)) << 32 }
}
