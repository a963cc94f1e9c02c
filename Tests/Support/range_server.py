#!/usr/bin/env python3
"""A static host for delta-update tests that lies on purpose (loopback only).

Usage: range_server.py MODE FEED_DIR LOG
Serves the files of FEED_DIR (feed.json and the zips it names) with Range support, prints its
port on the first line, and appends "METHOD PATH range=..." to LOG per request; stops after
60 s. Whole-file answers are always the true bytes; MODE changes the ranged ones only:
  ok          ranges honoured (206, with an ETag)
  norange     every ranged request answered 200 with the whole file (a host without ranges)
  otherbytes  206 with the right headers but other bytes (but for the end of the file,
              so the directory reads and the rebuilt file comes out wrong)
  liedir      the zip's central directory, when asked for by range, claims every entry
              starts at offset 0 (overlapping entries)
  slow        ranges honoured, each ranged answer after 1 s (a window to kill a sync in)
"""
import http.server
import os
import re
import struct
import sys
import threading
import time

mode, root, log_path = sys.argv[1:4]


def lying(data):
    """The file with each central directory entry's local header offset set to 0."""
    out = bytearray(data)
    end = out.rfind(b"PK\x05\x06")
    start = struct.unpack_from("<I", out, end + 16)[0]
    p = start
    while p < end and out[p:p + 4] == b"PK\x01\x02":
        struct.pack_into("<I", out, p + 42, 0)
        n, m, k = struct.unpack_from("<HHH", out, p + 28)
        p += 46 + n + m + k
    return bytes(out)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        wanted = self.headers.get("Range")
        with open(log_path, "a") as log:
            log.write(f"GET {self.path} range={wanted}\n")
        path = os.path.join(root, self.path.lstrip("/").split("?")[0])
        if not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = open(path, "rb").read()
        tag = '"t%d"' % len(data)
        match = re.fullmatch(r"bytes=(\d+)-(\d+)", wanted or "")
        if not match or mode == "norange" or not path.endswith(".zip"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json" if path.endswith(".json") else "application/zip")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("ETag", tag)
            self.end_headers()
            self.wfile.write(data)
            return
        if mode == "slow":
            time.sleep(1)
        first, last = int(match.group(1)), min(int(match.group(2)), len(data) - 1)
        source = data
        if mode == "liedir":
            source = lying(data)
        body = source[first:last + 1]
        if mode == "otherbytes" and last < len(data) - 1:
            body = bytes((b + 1) % 256 for b in body)
        self.send_response(206)
        self.send_header("Content-Type", "application/zip")
        self.send_header("Content-Range", f"bytes {first}-{last}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", tag)
        self.end_headers()
        self.wfile.write(body)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
threading.Timer(60, server.shutdown).start()
server.serve_forever()
