import Foundation
import GalleyCore

/// The process-wide settings libarchive's zip code depends on, made once and explicitly.
///
/// libarchive writes each entry's DOS time from `localtime()` and converts entry names through
/// the C locale's character set. So Galley's bytes would depend on the machine's time zone, and
/// non-ASCII names would fail under the C locale. The fix is process-wide (`TZ`, `LC_CTYPE`), so
/// it is not hidden inside the zip classes: the program calls `configureForArchives()` first
/// thing (the CLI's `main`; each test suite that reaches libarchive, in its `init`), and `ZipWriter` refuses to
/// start when it has not been done.
public enum ProcessEnvironment {
    /// Sets `TZ=UTC` and a UTF-8 `LC_CTYPE` (`C.UTF-8`, else `en_US.UTF-8`, else `UTF-8`, which
    /// is what macOS calls it). Call it before other threads start: reading the environment while
    /// another thread writes it is undefined in C. Safe to call again from any thread: the
    /// settings are made once.
    public static func configureForArchives() { _ = configured }

    private static let configured: Void = {
        setenv("TZ", "UTC", 1)
        tzset()
        for name in ["C.UTF-8", "en_US.UTF-8", "UTF-8"] where setlocale(LC_CTYPE, name) != nil { break }
    }()

    /// Whether the process has the settings `configureForArchives()` makes.
    public static var isConfiguredForArchives: Bool {
        guard let zone = getenv("TZ"), String(cString: zone) == "UTC" else { return false }
        guard let ctype = setlocale(LC_CTYPE, nil) else { return false }
        let name = String(cString: ctype).lowercased()
        return name.contains("utf-8") || name.contains("utf8")
    }

    /// Fails, naming the fix, when the process was not configured.
    static func requireArchiveSettings() throws {
        guard isConfiguredForArchives else {
            throw GalleyError(
                "the process is not set up for libarchive (TZ=UTC, a UTF-8 LC_CTYPE)",
                hint: "Call ProcessEnvironment.configureForArchives() at start-up, before other threads start.")
        }
    }
}
