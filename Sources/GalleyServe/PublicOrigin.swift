import Foundation
import HTTPTypes
import NIOCore

/// The addresses of the proxies whose `Forwarded`, `X-Forwarded-Host` and `X-Forwarded-Proto`
/// headers `serve` believes (`--trusted-proxy`): single addresses or CIDR blocks, IPv4 or IPv6.
/// From anyone else those headers are ignored: links built from them would go, through a
/// shared cache, to every reader.
public struct TrustedProxies: Sendable, Equatable {
    struct Block: Sendable, Equatable {
        var bytes: [UInt8]
        var bits: Int
    }
    let blocks: [Block]

    public static let none = TrustedProxies(blocks: [])

    init(blocks: [Block]) { self.blocks = blocks }

    /// Parses `127.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`; the failure names the first entry
    /// that is none of these, for the command's usage error.
    public static func parse(_ entries: [String]) -> Result<TrustedProxies, InvalidEntry> {
        var blocks: [Block] = []
        for entry in entries {
            let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let bytes = Self.address(String(parts[0])) else { return .failure(InvalidEntry(entry: entry)) }
            var bits = bytes.count * 8
            if parts.count == 2 {
                guard let given = Int(parts[1]), (0...bits).contains(given) else { return .failure(InvalidEntry(entry: entry)) }
                bits = given
            }
            blocks.append(Block(bytes: bytes, bits: bits))
        }
        return .success(TrustedProxies(blocks: blocks))
    }

    public struct InvalidEntry: Error, Sendable {
        public let entry: String
    }

    public var isEmpty: Bool { blocks.isEmpty }

    /// Whether a connection from `address` is one of the trusted proxies.
    func contains(_ address: SocketAddress?) -> Bool {
        guard !blocks.isEmpty, let text = address?.ipAddress, var bytes = Self.address(text) else { return false }
        // An IPv4 peer on a dual-stack socket arrives as ::ffff:a.b.c.d.
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            bytes = Array(bytes[12...])
        }
        return blocks.contains { block in
            guard block.bytes.count == bytes.count else { return false }
            var left = block.bits
            for (mine, theirs) in zip(block.bytes, bytes) where left > 0 {
                let mask: UInt8 = left >= 8 ? 0xFF : ~(0xFF >> UInt8(left))
                guard mine & mask == theirs & mask else { return false }
                left -= 8
            }
            return true
        }
    }

    /// An IP address's bytes (4 or 16), or nil.
    static func address(_ text: String) -> [UInt8]? {
        var four = in_addr()
        if inet_pton(AF_INET, text, &four) == 1 {
            return withUnsafeBytes(of: &four) { Array($0) }
        }
        var six = in6_addr()
        if inet_pton(AF_INET6, text, &six) == 1 {
            return withUnsafeBytes(of: &six) { Array($0) }
        }
        return nil
    }
}

/// Where a request's links point: the scheme and host apps reached this server at.
enum PublicOrigin {
    static let forwarded = HTTPField.Name("Forwarded")!
    static let forwardedHost = HTTPField.Name("X-Forwarded-Host")!
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!

    /// `http://` and the address the connection reached (`127.0.0.1:8080`, `[::1]:8080`): the
    /// listening address as the client dialled it, never a header the client chose.
    static func listening(_ local: SocketAddress?) -> String {
        guard let local, let ip = local.ipAddress, let port = local.port else { return "" }
        if case .v6 = local { return "http://[\(ip)]:\(port)" }
        return "http://\(ip):\(port)"
    }

    /// What a trusted proxy says the client asked for: RFC 7239 `Forwarded` (its first element,
    /// the one the client-facing proxy wrote), else `X-Forwarded-Host` and `X-Forwarded-Proto`;
    /// nil when neither names a host fit for a link.
    static func forwardedBase(_ headers: HTTPFields) -> String? {
        var host: String?
        var scheme: String?
        if let value = headers[forwarded] {
            let first = value.split(separator: ",", maxSplits: 1).first ?? ""
            for pair in first.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2 else { continue }
                let text = parts[1].hasPrefix("\"") && parts[1].hasSuffix("\"") && parts[1].count >= 2
                    ? String(parts[1].dropFirst().dropLast()) : parts[1]
                switch parts[0].lowercased() {
                case "host": host = text
                case "proto": scheme = text.lowercased()
                default: continue
                }
            }
        }
        if host == nil, let value = headers[forwardedHost] {
            host = value.split(separator: ",", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        if scheme == nil, let value = headers[forwardedProto] {
            scheme = value.split(separator: ",", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }
        guard let host, isHost(host) else { return nil }
        let chosen = scheme == "https" ? "https" : "http"
        return "\(chosen)://\(host)"
    }

    /// A host and optional port as links may carry them: letters, digits, `.-:[]`, at most 255.
    static func isHost(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 255
            && text.unicodeScalars.allSatisfy { ($0.isASCII && CharacterSet.alphanumerics.contains($0)) || ".-:[]".unicodeScalars.contains($0) }
    }
}

extension GalleyServer {
    /// Why a server could not start listening, in words, and what to do (NIO's error reads
    /// `bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)`).
    public static func listenFailure(_ error: any Error, port: Int) -> (reason: String, hint: String) {
        switch (error as? IOError)?.errnoCode {
        case EADDRINUSE:
            return ("port \(port) is already in use by another program",
                    "Stop that program (`ss -ltnp 'sport = :\(port)'` names it) or choose another port with --port (0 takes any free one).")
        case EACCES:
            return ("this user may not listen on port \(port)",
                    "Ports below 1024 need privileges: choose one above 1023 with --port, and put a proxy in front.")
        case EADDRNOTAVAIL:
            return ("the address is not one of this machine's", "Give --host an address of this machine (127.0.0.1, 0.0.0.0 for all).")
        default:
            return ("\(error)", "Check --host and --port: the address must be this machine's and the port free.")
        }
    }
}
