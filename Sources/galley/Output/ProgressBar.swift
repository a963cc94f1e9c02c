import Foundation

/// A one-line progress bar on a terminal, redrawn at most ten times a second.
final class ProgressBar {
    private let terminal: Terminal
    private let label: String
    private var lastDraw: UInt64 = 0
    private var drawn = false

    /// `nil` (no bar) when disabled or when standard error is not a terminal.
    init?(label: String, terminal: Terminal = .standardError, enabled: Bool) {
        guard enabled, terminal.isTTY else { return nil }
        self.terminal = terminal
        self.label = label
    }

    func update(done: Int64, total: Int64, detail: String) {
        let now = DispatchTime.now().uptimeNanoseconds
        guard now - lastDraw > 100_000_000 || done >= total else { return }
        lastDraw = now
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        terminal.write("\r\u{1B}[2K\(label) \(bar) \(Int(fraction * 100))% \(detail)")
        drawn = true
    }

    func clear() {
        if drawn { terminal.write("\r\u{1B}[2K") }
    }
}

/// `1.2 MB`: decimal units, as file managers show sizes.
func formatBytes(_ bytes: Int64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1000 && unit < units.count - 1 {
        value /= 1000
        unit += 1
    }
    return unit == 0 ? "\(bytes) B" : String(format: "%.1f", value) + " " + units[unit]
}
