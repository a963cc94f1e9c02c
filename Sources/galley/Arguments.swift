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

/// A duration as every option takes one: whole seconds, bare (`30`) or with a unit (`30s`,
/// `10m`, `1h`, `7d`). One rule for `--timeout`, `--every`, `--idle-timeout`, `--send-timeout`,
/// `--shared-max-age`, `--stale-while-revalidate` and `--signature-lifetime`, which took
/// seconds only, units only, or read a bare number as days.
struct Seconds: ExpressibleByArgument, CustomStringConvertible, Hashable, Sendable {
    var seconds: Int64

    init(_ seconds: Int64) { self.seconds = seconds }

    init?(argument: String) {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let unit = argument.last.flatMap { units[$0] }
        let digits = unit == nil ? Substring(argument) : argument.dropLast()
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
              let number = Int64(digits) else { return nil }
        let (total, overflow) = number.multipliedReportingOverflow(by: unit ?? 1)
        guard !overflow else { return nil }
        seconds = total
    }

    /// The shortest way to write it back (`7d`, `90s`), as `--help` shows a default.
    var description: String {
        for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds > 0 && seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }

    var interval: TimeInterval { TimeInterval(seconds) }

    /// A usage error unless it is within `range` (seconds), worded as every duration's is.
    func require(_ range: ClosedRange<Int64>, _ option: String) throws {
        guard range.contains(seconds) else {
            throw ValidationError("\(option) must be from \(Seconds(range.lowerBound)) to \(Seconds(range.upperBound)): whole seconds, or with s, m, h or d (90, 90s, 10m, 1h, 7d)")
        }
    }
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
        valueName: "duration"))
    var sharedMaxAge = Seconds(10)

    @Option(help: ArgumentHelp(
        "How long past --shared-max-age a shared cache may still answer with a kept JSON answer while it asks again.",
        valueName: "duration"))
    var staleWhileRevalidate = Seconds(60)

    func validate() throws {
        try sharedMaxAge.require(0...86_400, "--shared-max-age")
        try staleWhileRevalidate.require(0...86_400, "--stale-while-revalidate")
    }
}
