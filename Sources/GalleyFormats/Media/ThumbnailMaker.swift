internal import CVips
import Foundation
import GalleyCore
import Synchronization

/// How a square thumbnail is cut from a picture that is not square.
public enum ThumbnailCrop: String, Sendable, CaseIterable {
    /// libvips's attention crop: the part with the most skin, saturation and edges.
    case attention
    /// The middle of the picture.
    case centre
}

/// Square JPEG thumbnails (`crop_350_350`) made with libvips (the only file that touches
/// CVips, docs/architecture.md). Each picture is streamed from its file; the same picture and
/// libvips version give the same bytes (no metadata, no dates).
public struct ThumbnailMaker: Sendable {
    public static let side = 350
    /// The largest picture a thumbnail is made of (a 20,000 x 10,000 panorama fits).
    public static let maxPixels = 200_000_000
    static let quality: Int32 = 82

    /// Where the thumbnails are written, one file per source picture.
    public let folder: URL
    public var crop: ThumbnailCrop

    /// libvips, loaded on first use (CVips's shim opens it with dlopen): its functions, or why
    /// it could not start.
    private static let library: Result<VipsFunctions, ThumbnailStartFailure> = {
        var table = galley_vips_table()
        var message = [CChar](repeating: 0, count: 512)
        guard galley_vips_start(&table, &message, message.count) != 0 else { return .success(VipsFunctions(table: table)) }
        return .failure(ThumbnailStartFailure(text: text(of: message)))
    }()

    /// At most one thumbnail more than there are cores is made at once, whatever the callers'
    /// threads: pack makes them in the work items it queues on GCD's shared pool, which adds
    /// threads while its own wait (on libvips's reads and writes), and each libvips pipeline
    /// holds about 8 MB of pixel buffers for a 1800x1200 photo (decoded at full size: libvips
    /// shrinks on load only when a factor of two is left for the last step;
    /// `vips_tracked_get_mem_highwater`) and wakes worker threads of its own. One more than the
    /// cores, because a pipeline leaves its core idle part of the time (its calling thread
    /// waits on its worker, and on the files). More at once adds a pipeline's memory each and
    /// gains no time (`bench/thumbnail_bench.py` measures pack of such photos).
    private let turns: Turns

    public init(folder: URL, crop: ThumbnailCrop = .attention) {
        self.folder = folder
        self.crop = crop
        turns = Turns(ProcessInfo.processInfo.activeProcessorCount + 1)
    }

    /// A counting semaphore shared by the copies of one maker.
    final class Turns: Sendable {
        private let semaphore: DispatchSemaphore
        private let count: Int
        /// Held by whoever is taking every turn, so that two such takers never hold some each.
        private let alone = NSLock()

        init(_ count: Int) {
            self.count = max(1, count)
            semaphore = DispatchSemaphore(value: self.count)
        }

        func take<T>(_ body: () -> T) -> T {
            semaphore.wait()
            defer { semaphore.signal() }
            return body()
        }

        /// Runs `body` while no other turn is taken (it waits for those taken to end).
        func takeAlone<T>(_ body: () -> T) -> T {
            alone.lock()
            defer { alone.unlock() }
            for _ in 0..<count { semaphore.wait() }
            defer { for _ in 0..<count { semaphore.signal() } }
            return body()
        }
    }

    /// A made thumbnail, or why it could not be made.
    public enum Outcome: Sendable, Hashable {
        case made(SourceFile)
        case failed(String)
    }

    /// The thumbnail of the picture at `source` (a path inside the issue folder, which names
    /// the thumbnail's file, so the same picture is made once however often it is used).
    /// `format`: the picture's, as `MediaProber` read it (a HEIC or AVIF picture loads libvips's
    /// HEIF module first, `loadHEIFModule`).
    public func thumbnail(of source: SourceFile, format: MediaFormat) -> Outcome {
        let vips: galley_vips_table
        switch Self.library {
        case .success(let functions): vips = functions.table
        case .failure(let failure):
            return .failed("libvips could not start (\(failure.text)); install Debian's libvips42, or pack with --thumbnails none")
        }
        let output = folder.appending(path: "\(SHA256Hasher.hex(of: source.relativePath).prefix(32)).jpg")
        if let status = FileStatus(output.path), status.kind == .file {
            return .made(SourceFile(relativePath: source.relativePath, path: output.path, size: status.size))
        }
        let fd = open(source.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failed(String(cString: strerror(errno))) }
        defer { close(fd) }
        if format == .heif || format == .avif { loadHEIFModule(vips) }
        // Written under a temporary name and renamed: a thumbnail file is whole or absent.
        var message = [CChar](repeating: 0, count: 512)
        func attempt() -> SourceFile? {
            // libvips reads the picture through the descriptor: from its start, each attempt.
            guard lseek(fd, 0, SEEK_SET) == 0 else { return nil }
            let partial = folder.appending(path: "\(output.lastPathComponent).\(UInt32.random(in: 0...UInt32.max)).part.jpg")
            let status = withUnsafePointer(to: vips) { table in
                galley_vips_square_jpeg(table, fd, partial.path, Int32(Self.side), crop == .attention ? 1 : 0, Self.quality,
                                        &message, message.count)
            }
            guard status == 0, rename(partial.path, output.path) == 0, let written = FileStatus(output.path) else {
                unlink(partial.path)
                return nil
            }
            return SourceFile(relativePath: source.relativePath, path: output.path, size: written.size)
        }
        if let made = turns.take(attempt) { return .made(made) }
        // libvips keeps one error buffer for the whole process: a thumbnail that failed while
        // others were being made may have read their words (another picture's "Corrupt JPEG
        // data: 55 extraneous bytes"), or none when another thread had just cleared it, so the
        // same pack reported different causes run to run. It is made again with no other
        // thumbnail under way, from a clear buffer: its own words, the same every run. (A
        // picture that fails is rare; the bench's undecodable ones cost twice.)
        message = [CChar](repeating: 0, count: 512)
        let alone = turns.takeAlone { () -> SourceFile? in
            vips.error_clear()
            return attempt()
        }
        if let alone { return .made(alone) }
        let words = text(of: message).split(separator: "\n").first.map(String.init) ?? "libvips failed"
        return .failed(words.isEmpty ? "libvips failed" : words)
    }
}

extension ThumbnailMaker {
    /// Whether libvips's HEIF module is loaded (`loadHEIFModule`).
    private static let heifModuleLoaded = Atomic<Bool>(false)

    /// Loads libvips's HEIF module the first time a picture may need it, with no thumbnail
    /// under way (it registers its loaders with GLib's type system while libvips looks them up
    /// for every picture). Not at libvips's start: the module and libheif's decoders and
    /// encoders are 2.1 MB of resident pages that an issue of JPEG and PNG pictures never uses.
    private func loadHEIFModule(_ vips: galley_vips_table) {
        guard !Self.heifModuleLoaded.load(ordering: .acquiring) else { return }
        turns.takeAlone {
            guard !Self.heifModuleLoaded.load(ordering: .acquiring) else { return }
            withUnsafePointer(to: vips) { galley_vips_load_heif_module($0) }
            Self.heifModuleLoaded.store(true, ordering: .releasing)
        }
    }
}

extension ProcessEnvironment {
    /// Sets `VIPSHOME=/dev/null` unless it is set, so that libvips, when a thumbnail first
    /// starts it, loads none of its modules and writes nothing into the environment. Left
    /// unset, `vips_init` sets `VIPSHOME` itself, from whichever pack thread makes the first
    /// thumbnail, while other threads may read the environment (undefined in C, as for
    /// `configureForArchives`), and loads every module beside it: ImageMagick's, PDF,
    /// OpenSlide and JPEG XL loaders, 4.6 MB of resident pages for formats Galley never hands
    /// libvips. The HEIF module, which Galley's HEIC and AVIF pictures need, is loaded on its
    /// own when the first such picture comes (`loadHEIFModule`). A `VIPSHOME` the user set is kept. Call it before
    /// other threads start (the CLI's `main` does); the setting is made once.
    public static func configureForThumbnails() { _ = thumbnailSettings }

    private static let thumbnailSettings: Void = { setenv("VIPSHOME", "/dev/null", 0) }()
}

/// A C message buffer's text up to its NUL, decoded leniently (libvips may quote file bytes).
private func text(of buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

struct ThumbnailStartFailure: Error {
    var text: String
}

/// libvips's function pointers, written once by `galley_vips_start` and only read after:
/// safe to share between threads, which the C struct cannot say of itself.
struct VipsFunctions: @unchecked Sendable {
    let table: galley_vips_table
}
