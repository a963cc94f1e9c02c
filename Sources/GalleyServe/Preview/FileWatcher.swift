import Foundation
import GalleyCore
#if canImport(Glibc)
import Glibc
#endif

/// Watches a folder tree and calls `onChange` after files in it change. Linux's inotify,
/// through Glibc: no package wraps it (swift-nio and swift-system do not), and it is a few
/// system calls. New folders are watched as they appear. Events arrive on a thread of its own;
/// `stop()` ends it within half a second.
final class FileWatcher: @unchecked Sendable {
    private let root: URL
    private let onChange: @Sendable ([String]) -> Void
    private let lock = NSLock()
    private var stopped = false
    private var descriptor: Int32 = -1
    /// Watch descriptor → folder path.
    private var folders: [Int32: String] = [:]

    init(root: URL, onChange: @escaping @Sendable ([String]) -> Void) {
        self.root = root
        self.onChange = onChange
    }

    #if os(Linux)
    private static let mask = UInt32(IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_MODIFY)

    /// Starts watching; throws when inotify is not available (or the folder cannot be read).
    func start() throws {
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else {
            throw GalleyError("cannot watch files: inotify is not available (\(String(validatingCString: strerror(errno)) ?? "error \(errno)"))",
                              hint: "Raise fs.inotify.max_user_instances, or use `galley render --output` and reload by hand.")
        }
        descriptor = fd
        try add(root.path)
        if let walker = FileManager.default.enumerator(atPath: root.path) {
            while let relative = walker.nextObject() as? String {
                let path = root.appending(path: relative).path
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue, !relative.hasPrefix(".") {
                    try add(path)
                }
            }
        }
        let thread = Thread { [self] in run() }
        thread.name = "galley.preview.watch"
        thread.start()
    }

    private func add(_ path: String) throws {
        let watch = inotify_add_watch(descriptor, path, Self.mask)
        guard watch >= 0 else {
            throw GalleyError("cannot watch this folder (\(String(validatingCString: strerror(errno)) ?? "error \(errno)"))", path: path,
                              hint: "Raise fs.inotify.max_user_watches if the source has many folders.")
        }
        lock.lock()
        folders[watch] = path
        lock.unlock()
    }

    private func run() {
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer {
            buffer.deallocate()
            close(descriptor)
        }
        while true {
            lock.lock()
            let done = stopped
            lock.unlock()
            if done { return }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 500) > 0 else { continue }
            let count = read(descriptor, buffer, capacity)
            guard count > 0 else { continue }
            var changed: [String] = []
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameLength = Int(event.len)
                var name = ""
                if nameLength > 0 {
                    let start = buffer.advanced(by: offset + header).assumingMemoryBound(to: UInt8.self)
                    let bytes = UnsafeBufferPointer(start: start, count: nameLength)
                    name = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                }
                lock.lock()
                let folder = folders[event.wd]
                lock.unlock()
                if let folder, !name.hasPrefix(".") {
                    let path = folder + "/" + name
                    changed.append(path)
                    if event.mask & UInt32(IN_ISDIR) != 0 && event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                        try? add(path)
                    }
                }
                offset += header + nameLength
            }
            if !changed.isEmpty { onChange(changed) }
        }
    }
    #else
    func start() throws {
        throw GalleyError("galley preview watches files with Linux's inotify", hint: "Use `galley render --output` and reload by hand.")
    }
    #endif

    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
    }
}
