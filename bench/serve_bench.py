#!/usr/bin/env python3
"""Benchmark: `galley serve` against nginx serving the same bytes as static files, with wrk.

A store of 100 issues x 300 articles (bench/store_bench.py's small issues) plus the 190 MB
synthetic issue of bench/pack_bench.py. nginx (Debian, `sendfile on`) serves, from a folder,
the bytes galley answers: the article list (/v2/articles?limit=20), one article's detail, and
the zip. Both run on loopback in the same run, one after the other; wrk (Debian) drives them.

  1. the article list at 64 connections: requests/s and p50/p99 (goal: >= 0.5x nginx's rate,
     p99 under 10 ms);
  2. a 304 revalidation of the list (If-None-Match) at 64 connections (goal: >= 0.8x nginx's);
  3. an article detail at 64 connections (no goal; reported);
  4. the 190 MB zip at 4 connections: throughput (goal: >= 0.8x nginx's) and galley's peak RSS
     over the whole run (goal: under 64 MB).

Ratios, never absolute times: this 2-core machine runs wrk, the server and the kernel together.
Install wrk and nginx with `scripts/setup.sh --bench`; build with `make release`.

Usage: bench/serve_bench.py [--seconds 10] [--galley PATH] [--issues 100]
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pack_bench import ROOT, WORK, generate, settle, timed  # noqa: E402
from store_bench import small_issue  # noqa: E402
import results  # noqa: E402

OUT = os.path.join(WORK, "serve-bench")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_store(galley, issues):
    """The store, built once and kept (a `.complete` marker), with the 190 MB issue in it."""
    store = os.path.join(OUT, f"store-{issues}")
    if os.path.exists(os.path.join(store, ".complete")):
        return store
    shutil.rmtree(store, ignore_errors=True)
    zips = os.path.join(OUT, "zips")
    os.makedirs(zips, exist_ok=True)
    for index in range(issues):
        folder = small_issue(index)
        zip_path = os.path.join(zips, f"org.example.store.{index:03d}.zip")
        if not os.path.exists(zip_path):
            timed([galley, "pack", folder, "--output", zips + "/", "--thumbnails", "none", "-q"])
        timed([galley, "import", zip_path, "--store", store, "-q"])
    big = os.path.join(zips, "org.example.bench.300.zip")
    # store_bench.py packs the same issue: take its zip when it is there.
    made = os.path.join(WORK, "store-bench", "org.example.bench.300.zip")
    if not os.path.exists(big) and os.path.exists(made):
        shutil.copyfile(made, big)
    if not os.path.exists(big):
        timed([galley, "pack", generate(300, 310), "--output", zips + "/", "-q"])
    timed([galley, "import", big, "--store", store, "-q"])
    open(os.path.join(store, ".complete"), "w").close()
    return store


def wait_for(url, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"serve_bench: nothing answers at {url}")


def fetch(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read(), dict(response.headers)


def wrk(url, connections, seconds, header=None):
    """Requests/s, transfer MB/s, p50 and p99 in ms of one wrk run."""
    cmd = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", url]
    if header:
        cmd[1:1] = ["-H", header]
    text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout

    def number(pattern, scale=1.0):
        match = re.search(pattern, text)
        return float(match.group(1)) * scale if match else float("nan")

    def latency(label):
        match = re.search(rf"{label}%\s+([\d.]+)(us|ms|s)", text)
        if not match:
            return float("nan")
        return float(match.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[match.group(2)]

    transfer = re.search(r"Transfer/sec:\s+([\d.]+)(KB|MB|GB)", text)
    mbps = float(transfer.group(1)) * {"KB": 1 / 1024, "MB": 1, "GB": 1024}[transfer.group(2)] if transfer else float("nan")
    non2xx = number(r"Non-2xx or 3xx responses: (\d+)", 1)
    if non2xx == non2xx and non2xx > 0:
        sys.exit(f"serve_bench: {url} answered {int(non2xx)} errors under load:\n{text}")
    return number(r"Requests/sec:\s+([\d.]+)"), mbps, latency("50"), latency("99")


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--issues", type=int, default=100)
    parser.add_argument("--galley", default=os.path.join(ROOT, ".build", "release", "galley"))
    args = parser.parse_args()
    settle(args.galley)
    for tool in ("wrk", "nginx"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            sys.exit(f"serve_bench: {tool} is missing: run scripts/setup.sh --bench")
    os.makedirs(OUT, exist_ok=True)
    store = build_store(args.galley, args.issues)

    port = free_port()
    server = subprocess.Popen([args.galley, "serve", "--store", store, "--port", str(port), "-q"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    nginx = None
    try:
        galley = f"http://127.0.0.1:{port}"
        wait_for(galley + "/healthz")
        # The same bytes for nginx: the list, one detail, the zip.
        static = os.path.join(OUT, "static")
        shutil.rmtree(static, ignore_errors=True)
        os.makedirs(static)
        listing, headers = fetch(galley + "/v2/articles?limit=20")
        list_tag = headers["ETag"]
        article = json.loads(listing)["items"][0]["global_id"]
        detail, _ = fetch(f"{galley}/v2/articles/{article}")
        feed = json.loads(fetch(galley + "/feed")[0])
        big = max(feed["packages"], key=lambda p: p["size"])
        zip_path = f"/packages/{big['apple_id']}/{big['sha256']}.zip"
        with open(os.path.join(static, "articles.json"), "wb") as f:
            f.write(listing)
        with open(os.path.join(static, "detail.json"), "wb") as f:
            f.write(detail)
        shutil.copyfile(os.path.join(store, "packages", big["sha256"] + ".zip"), os.path.join(static, "issue.zip"))

        nginx_port = free_port()
        prefix = os.path.join(OUT, "nginx")
        shutil.rmtree(prefix, ignore_errors=True)
        os.makedirs(os.path.join(prefix, "logs"))
        conf = os.path.join(prefix, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""worker_processes 2;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log warn;
{"user root;" if os.geteuid() == 0 else ""}
events {{ worker_connections 1024; }}
http {{
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  types {{ application/json json; application/zip zip; }}
  server {{
    listen 127.0.0.1:{nginx_port};
    root {static};
    etag on;
  }}
}}
""")
        nginx = subprocess.Popen(["nginx", "-p", prefix, "-c", conf, "-g", "daemon off;"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        peer = f"http://127.0.0.1:{nginx_port}"
        wait_for(peer + "/articles.json")
        _, peer_headers = fetch(peer + "/articles.json")
        peer_tag = peer_headers["ETag"]

        s = args.seconds
        rows = []
        g = wrk(galley + "/v2/articles?limit=20", 64, s)
        n = wrk(peer + "/articles.json", 64, s)
        rows.append(("article list (64 conn)", g, n, g[0] / n[0], ">= 0.5x, p99 <= 10 ms", g[0] / n[0] >= 0.5 and g[3] <= 10))
        g = wrk(galley + "/v2/articles?limit=20", 64, s, f"If-None-Match: {list_tag}")
        n = wrk(peer + "/articles.json", 64, s, f"If-None-Match: {peer_tag}")
        rows.append(("304 revalidation (64 conn)", g, n, g[0] / n[0], ">= 0.8x", g[0] / n[0] >= 0.8))
        g = wrk(f"{galley}/v2/articles/{article}", 64, s)
        n = wrk(peer + "/detail.json", 64, s)
        rows.append(("article detail (64 conn)", g, n, g[0] / n[0], "(reported)", True))
        g = wrk(galley + zip_path, 4, s)
        n = wrk(peer + "/issue.zip", 4, s)
        rows.append((f"{big['size'] / 1e6:.0f} MB zip (4 conn)", g, n, g[1] / n[1], ">= 0.8x throughput", g[1] / n[1] >= 0.8))
        rss = peak_rss_mb(server.pid)

        print(f"galley serve vs nginx, same bytes, wrk -t2, {s} s each, store of {args.issues} issues + the 190 MB issue")
        print(f"{'':30} {'galley req/s':>12} {'MB/s':>8} {'p50 ms':>7} {'p99 ms':>7} | {'nginx req/s':>11} {'MB/s':>8} "
              f"{'p50 ms':>7} {'p99 ms':>7} | ratio  goal")
        failed = False
        for name, g, n, ratio, goal, ok in rows:
            print(f"{name:30} {g[0]:12.0f} {g[1]:8.1f} {g[2]:7.2f} {g[3]:7.2f} | {n[0]:11.0f} {n[1]:8.1f} {n[2]:7.2f} "
                  f"{n[3]:7.2f} | {ratio:5.2f}  {goal} {'ok' if ok else 'MISSED'}")
            failed |= not ok
        print(f"galley serve peak RSS over the run: {rss:.1f} MB (goal < 64 MB) {'ok' if rss < 64 else 'MISSED'}")
        failed |= not rss < 64
        results.record("serve", [{
            "job": name, "peer": "nginx", "size": f"{args.issues} issues x 300 articles", "ratio": round(ratio, 2),
            "range": None, "peak_mb": round(rss, 1), "peer_peak_mb": None, "goal": goal.strip("()"),
            "met": ok if goal != "(reported)" else None, "better": "higher"} for name, g, n, ratio, goal, ok in rows],
            "make release && python3 bench/serve_bench.py " + " ".join(sys.argv[1:]))
        return 1 if failed else 0
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        if nginx is not None:
            nginx.send_signal(signal.SIGQUIT)
            nginx.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
