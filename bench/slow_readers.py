#!/usr/bin/env python3
"""Check: `galley serve` holds 2,000 slow readers in under 100 MB and closes them itself.

2,000 clients arrive 100 a second, each asks for a 25 MB issue zip and then reads 1 KiB every
5 s, far slower than any download needs. serve (the release binary, `--send-timeout 10`,
`--max-connections 2500`) must keep its peak resident memory (VmHWM) under 100 MB, close every
one of them through the send timeout (`galley_send_timeouts_total` reaches 2,000, nothing
refused), and answer `/healthz` within 2 s throughout. A goal in megabytes, not a ratio: it is
the memory a server box must keep for such a crowd, whatever the machine's speed (the debug
binary needs about 20% more, so this runs against `make release`).

It stops by itself: the last reader is closed about 25 s after the first arrives, and the
whole check gives up after 120 s.

Usage: bench/slow_readers.py [--galley PATH] [--readers 2000] [--limit-mb 100]
"""
import argparse
import json
import os
import re
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "Examples", "winter-2026")
ISSUE = "com.example.harbour.2026-01"


def noisy_store(galley, work, noise):
    """A store holding the example issue with `noise` bytes of incompressible data in its cover."""
    source = os.path.join(work, "source")
    shutil.copytree(EXAMPLE, source)
    with open(os.path.join(source, "cover.jpg"), "ab") as cover:
        cover.write(os.urandom(noise))
    subprocess.run([galley, "pack", source, "-o", work + "/", "-q"], check=True)
    store = os.path.join(work, "store")
    subprocess.run([galley, "import", os.path.join(work, ISSUE + ".zip"), "--store", store, "-q"], check=True)
    return store


def kib(pid, field):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def metric(base, name):
    text = urllib.request.urlopen(base + "/metrics", timeout=30).read().decode()
    found = re.search(r"^%s (\S+)$" % name, text, re.M)
    return int(float(found.group(1))) if found else 0


def crowd(port, pid, count, rate, deadline):
    """The slow readers; returns what was seen of the server meanwhile."""
    base = f"http://127.0.0.1:{port}"
    package = json.load(urllib.request.urlopen(f"{base}/packages/{ISSUE}", timeout=30))
    request = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % package["file_path"].split(str(port), 1)[1]).encode()
    selector, heads, connected = selectors.DefaultSelector(), {}, 0
    start, worst, probes, last_read, still_open = time.time(), 0.0, 0, 0.0, None
    while time.time() - start < deadline:
        now = time.time()
        while connected < count and connected < rate * (now - start):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            selector.register(s, selectors.EVENT_WRITE)
            heads[s] = b""
            connected += 1
        reading = now - last_read >= 5
        for key, events in selector.select(timeout=0.2):
            s = key.fileobj
            if events & selectors.EVENT_WRITE:
                s.send(request)
                selector.modify(s, selectors.EVENT_READ)
            elif not heads[s] or reading:
                try:
                    got = s.recv(1024)
                except OSError:
                    got = b""
                if not heads[s] and got:
                    heads[s] = got
                if not got:
                    selector.unregister(s)
                    s.close()
        if reading:
            last_read = now
            t = time.time()
            if urllib.request.urlopen(base + "/healthz", timeout=30).status == 200:
                probes += 1
            worst = max(worst, time.time() - t)
            if connected == count:
                still_open = metric(base, "galley_connections_open")
                if still_open <= 1:
                    break
    if still_open is None or still_open > 1:
        still_open = metric(base, "galley_connections_open")
    for key in list(selector.get_map().values()):
        key.fileobj.close()
    return {
        "peak_mb": round(kib(pid, "VmHWM:") / 1024, 1),
        "answered": sum(1 for head in heads.values() if head.startswith(b"HTTP/1.1 200")),
        "timeouts": metric(base, "galley_send_timeouts_total"),
        "refused": metric(base, "galley_connections_refused_total"),
        "open_at_end": still_open,
        "probes": probes,
        "worst_probe_s": round(worst, 2),
        "seconds": round(time.time() - start, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--galley", default=os.path.join(ROOT, ".build", "release", "galley"))
    parser.add_argument("--readers", type=int, default=2000)
    parser.add_argument("--limit-mb", type=float, default=100)
    args = parser.parse_args()
    if not os.access(args.galley, os.X_OK):
        sys.exit(f"slow_readers: no galley at {args.galley}; build it with `make release`")
    work = tempfile.mkdtemp(prefix="galley-slow-readers-")
    server = None
    try:
        store = noisy_store(args.galley, work, 24 << 20)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen([args.galley, "serve", "--store", store, "--port", str(port), "--quiet",
                                   "--send-timeout", "10", "--max-connections", "2500"])
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        seen = crowd(port, server.pid, args.readers, 100, 120)
    finally:
        if server:
            server.terminate()
            server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(seen))
    problems = []
    if seen["peak_mb"] >= args.limit_mb:
        problems.append(f"peak resident memory {seen['peak_mb']} MB, goal under {args.limit_mb:g} MB")
    if seen["answered"] != args.readers:
        problems.append(f"{seen['answered']} of {args.readers} readers got the zip's first bytes")
    if seen["timeouts"] != args.readers or seen["open_at_end"] > 1:
        problems.append(f"{seen['timeouts']} readers closed by the send timeout, {seen['open_at_end']} still open")
    if seen["worst_probe_s"] > 2:
        problems.append(f"a health probe took {seen['worst_probe_s']} s")
    for problem in problems:
        print("slow_readers: " + problem, file=sys.stderr)
    if not problems:
        print(f"slow_readers: {args.readers} slow readers held in {seen['peak_mb']} MB at most, each closed by the send timeout")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
