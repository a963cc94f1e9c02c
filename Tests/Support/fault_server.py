#!/usr/bin/env python3
"""A feed server that misbehaves on purpose, for `galley sync`'s fault tests (loopback only).

Usage: fault_server.py SCENARIO ZIP APPLE_ID LOG [FEED SIGNATURE]
Prints the port on the first line, then serves until killed (or 60 s, whichever is first).
It serves /feed (galley serve's shape, one package) and /p.zip (the zip), and appends one line
per request to LOG: "METHOD PATH range=... if-range=...".

Scenarios: ok; cut (the first download stops halfway, later ones honour Range + If-Range);
badsha (the feed names another SHA-256); busy (the first feed request is 429 with
Retry-After: 1); down (every request is 500); rollback (the feed's revision is 50 at first,
then 1: a restored backup); garbage (the feed is an HTML page, as a captive portal answers);
truncated (every download is a complete HTTP answer holding half the file, Range ignored);
stall (a download sends its headers and a few bytes, then nothing for 60 s); slow (downloads
come in 32 pieces 15 ms apart, Range honoured: a window for killing a sync mid-download);
replay (/feed answers the bytes of the file FEED with the Galley-Signature header in the file
SIGNATURE: an old signed answer replayed, or one changed on the way); longname (a Drupal
packager's single `{version, file_path}`, no SHA-256, whose file is named by 300 `x`s: the
download's own name must still be one the file system takes).
"""
import hashlib
import http.server
import os
import sys
import threading
import time

scenario, zip_path, apple_id, log_path = sys.argv[1:5]
data = open(zip_path, "rb").read()
sha = hashlib.sha256(data).hexdigest()
state = {"downloads": 0, "feeds": 0}
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        with lock:
            with open(log_path, "a") as log:
                log.write(f"GET {self.path} range={self.headers.get('Range')} if-range={self.headers.get('If-Range')}\n")
        if scenario == "down":
            return self.send(500, b"down")
        if self.path == "/feed" and scenario == "replay":
            body = open(sys.argv[5], "rb").read()
            signature = open(sys.argv[6]).read().strip()
            return self.send(200, body, [("Content-Type", "application/json"), ("Galley-Signature", signature)])
        if self.path == "/feed" and scenario == "garbage":
            return self.send(200, b"<html>Sign in</html>", [("Content-Type", "text/html")])
        long_path = "/" + "x" * 300 + ".zip"
        if self.path == "/feed" and scenario == "longname":
            import json
            return self.send(200, json.dumps({"version": 1, "file_path": long_path}).encode(), [("Content-Type", "application/json")])
        if self.path == long_path and scenario == "longname":
            return self.send(200, data, [("ETag", f'"{sha}"')])
        if self.path == "/feed":
            with lock:
                state["feeds"] += 1
                first = state["feeds"] == 1
            if scenario == "busy" and first:
                return self.send(429, b"slow down", [("Retry-After", "1")])
            import json
            feed = {"revision": 1 if scenario == "rollback" and not first else 50, "packages": [{
                "apple_id": apple_id, "global_id": "x", "version": 1, "file_path": "/p.zip", "size": len(data),
                "sha256": "0" * 64 if scenario == "badsha" else sha, "last_updated": "2026-01-01T00:00:00Z"}]}
            return self.send(200, json.dumps(feed).encode(), [("Content-Type", "application/json"), ("ETag", '"f%d"' % feed["revision"])])
        if self.path == "/p.zip":
            with lock:
                state["downloads"] += 1
                first = state["downloads"] == 1
            if scenario == "cut" and first:
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("ETag", f'"{sha}"')
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.connection.shutdown(2)
                self.close_connection = True
                return
            if scenario == "truncated":
                return self.send(200, data[: len(data) // 2], [("ETag", f'"{sha}"')])
            if scenario == "stall":
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[:100])
                self.wfile.flush()
                time.sleep(60)
                return
            wanted = self.headers.get("Range")
            if wanted and self.headers.get("If-Range") == f'"{sha}"' and wanted.startswith("bytes=") and wanted.endswith("-"):
                start = int(wanted[6:-1])
                return self.send(206, data[start:], [("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}"), ("ETag", f'"{sha}"')])
            if scenario == "slow":
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("ETag", f'"{sha}"')
                self.end_headers()
                piece = len(data) // 32 + 1
                for start in range(0, len(data), piece):
                    self.wfile.write(data[start:start + piece])
                    self.wfile.flush()
                    time.sleep(0.015)
                return
            return self.send(200, data, [("ETag", f'"{sha}"')])
        self.send(404, b"no")


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
threading.Timer(60, server.shutdown).start()
server.serve_forever()
