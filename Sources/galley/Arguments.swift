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

/// How long shared caches keep JSON (`serve`'s answers, a published bucket's objects): the
/// `s-maxage` and `stale-while-revalidate` of `GalleyServer.jsonCacheControl`.
struct JSONCacheOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "How long a shared cache (a CDN, nginx) may keep a JSON answer before it asks again (s-maxage); 0: it asks every time.",
        valueName: "seconds"))
    var sharedMaxAge = 10

    @Option(help: ArgumentHelp(
        "How long past --shared-max-age a shared cache may still answer with a kept JSON answer while it asks again.",
        valueName: "seconds"))
    var staleWhileRevalidate = 60

    func validate() throws {
        guard (0...86_400).contains(sharedMaxAge) else { throw ValidationError("--shared-max-age must be from 0 to 86400 seconds") }
        guard (0...86_400).contains(staleWhileRevalidate) else {
            throw ValidationError("--stale-while-revalidate must be from 0 to 86400 seconds")
        }
    }
}
