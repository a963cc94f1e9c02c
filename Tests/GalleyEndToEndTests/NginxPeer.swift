import Foundation
import Glibc
import Testing

/// Debian's nginx on a loopback port, in a folder of its own (config, logs, cache, temporary
/// files), as a caching proxy or a static host in front of what a test serves. Installed by
/// `scripts/setup.sh --test-peers`; stopped by `stop()` (and with the test process).
struct NginxPeer {
    let process: Process
    let port: Int
    let folder: URL

    /// Where nginx is: on PATH, else Debian's /usr/sbin (not on a non-root user's PATH).
    static func executable() throws -> URL {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin"]
        for folder in path where FileManager.default.isExecutableFile(atPath: folder + "/nginx") {
            return URL(fileURLWithPath: folder + "/nginx")
        }
        throw GalleyTestError("nginx is not installed: run scripts/setup.sh --test-peers")
    }

    /// A free loopback port (bound and released: nginx takes it a moment later).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw GalleyTestError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts nginx with `server`, the body of one `server { }` block (its `listen` is added);
    /// `http` goes into the `http { }` block before it. Logs each request to `access.log` as
    /// `METHOD URI STATUS CACHE UPSTREAM_STATUS RANGE IF_RANGE BYTES`.
    static func start(server: String, http: String = "") throws -> NginxPeer {
        let folder = try Harness.temporaryDirectory()
        let port = try freePort()
        let prefix = folder.path
        let config = """
            \(getuid() == 0 ? "user root root;" : "")
            worker_processes 1;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/error.log warn;
            events { worker_connections 64; }
            http {
                types { application/json json; application/zip zip; image/jpeg jpg; image/png png; image/gif gif; audio/mpeg mp3; video/mp4 mp4; }
                default_type application/octet-stream;
                log_format peer '$request_method $request_uri $status $upstream_cache_status $upstream_status "$http_range" "$http_if_range" $body_bytes_sent';
                access_log \(prefix)/access.log peer;
                client_body_temp_path \(prefix)/body;
                proxy_temp_path \(prefix)/proxy;
                fastcgi_temp_path \(prefix)/fastcgi;
                uwsgi_temp_path \(prefix)/uwsgi;
                scgi_temp_path \(prefix)/scgi;
                \(http)
                server {
                    listen 127.0.0.1:\(port);
                    \(server)
                }
            }
            """
        try config.write(to: folder.appending(path: "nginx.conf"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = try executable()
        process.arguments = ["-p", prefix, "-c", prefix + "/nginx.conf", "-e", prefix + "/error.log", "-g", "daemon off;"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let peer = NginxPeer(process: process, port: port, folder: folder)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if !process.isRunning {
                throw GalleyTestError("nginx did not start: \((try? String(contentsOf: folder.appending(path: "error.log"), encoding: .utf8)) ?? "")")
            }
            if try Self.connects(port) { return peer }
            usleep(50_000)
        }
        peer.stop()
        throw GalleyTestError("nginx did not listen on \(port) within 10 s")
    }

    static func connects(_ port: Int) throws -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// The access log's lines so far (nginx writes each when its answer ends).
    func requests() -> [String] {
        ((try? String(contentsOf: folder.appending(path: "access.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func stop() {
        guard process.isRunning else { return }
        // SIGQUIT: nginx's graceful stop, which also ends its worker.
        kill(process.processIdentifier, SIGQUIT)
        process.waitUntilExit()
    }
}
