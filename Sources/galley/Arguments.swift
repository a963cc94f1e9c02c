import Foundation
import ArgumentParser
import GalleyCore
import GalleyKit

// Closed choices are the library's enums; conforming them here lets `--help` list their values
// and generated shell completions offer them.
extension ReportFormat: ExpressibleByArgument {}
extension RenderStyle: ExpressibleByArgument {}
extension MissingAssetPolicy: ExpressibleByArgument {}
extension MediaKind: ExpressibleByArgument {}
extension ColorMode: ExpressibleByArgument {}
extension ThumbnailMode: ExpressibleByArgument {}

/// A duration option's value (`serve --signature-lifetime`, `sync --every`): a number and s,
/// m, h or d, in seconds; days when no unit is given.
func durationSeconds(_ text: String) -> TimeInterval? {
    let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
    let unit = text.last.flatMap { units[$0] }
    guard let number = Double(unit == nil ? text : String(text.dropLast())), number.isFinite, number >= 0 else { return nil }
    return number * (unit ?? 86_400)
}

/// `--public-url` as serve and publish take it: an http or https address with a host, no query
/// and no fragment (links are made by appending paths to it).
func validatePublicURL(_ text: String?, example: String) throws {
    guard let text else { return }
    guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil,
          url.query == nil, url.fragment == nil else {
        throw ValidationError("--public-url must be an http or https address without query, e.g. \(example)")
    }
}
