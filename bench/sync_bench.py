#!/usr/bin/env python3
"""Benchmark: `galley sync` against curl (+ `galley import`) on the same loopback server.

  1. An unchanged feed: galley serve with the store of 100 issues x 300 articles plus the
     190 MB issue (bench/serve_bench.py's), a reader store that followed it once; then
     `galley sync URL --store reader -q` (one conditional request answered 304, process start
     included; goal: under 50 ms, median). For reference, in the same run: `curl` sending the
     same If-None-Match.
  2. A new issue (the 300-article one, 190 MB; with --articles 30000 the 651 MB one of 60,000
     small files): a server whose store holds only that issue; `galley sync` into an empty
     reader store (download, size and SHA-256 check, the import checks, the atomic import)
     against `curl -o` of the same zip followed by `galley import` of it (goal: within 1.2x,
     median of --runs), and galley sync's peak memory (goal: under 64 MB).

Ratios to a peer measured in the same run, never absolute times, except the 50 ms goal the
issue sets. Build with `make release` first; curl comes from Debian.

Usage: bench/sync_bench.py [--runs 5] [--articles 300] [--galley PATH]
"""
import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pack_bench import ROOT, WORK, settle, timed  # noqa: E402
from serve_bench import build_store, free_port, wait_for  # noqa: E402
from store_bench import quick  # noqa: E402
from import_bench import bench_zip  # noqa: E402
import results  # noqa: E402

OUT = os.path.join(WORK, "sync-bench")


@contextlib.contextmanager
def served(galley, store):
    """`galley serve` of `store` on a free loopback port: its base address, stopped after."""
    port = free_port()
    server = subprocess.Popen([galley, "serve", "--store", store, "--port", str(port), "-q"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--articles", type=int, default=300, help="the new issue's articles (300, 3000 or 30000)")
    parser.add_argument("--galley", default=os.path.join(ROOT, ".build", "release", "galley"))
    args = parser.parse_args()
    settle(args.galley)
    galley = os.path.abspath(args.galley)
    if not os.path.exists(galley):
        sys.exit(f"sync_bench: no {galley}; run `make release` first")
    if shutil.which("curl") is None:
        sys.exit("sync_bench: curl is missing (apt-get install curl)")
    os.makedirs(OUT, exist_ok=True)
    failed = False

    # 1. The unchanged feed.
    store = build_store(galley, 100)
    with served(galley, store) as base:
        reader = os.path.join(OUT, "reader-100")
        shutil.rmtree(reader, ignore_errors=True)
        seconds, _ = timed([galley, "sync", base + "/feed", "--store", reader, "-q"])
        print(f"first sync of {base}/feed (101 packages): {seconds:.1f} s")
        with urllib.request.urlopen(base + "/feed") as response:
            etag = response.headers["ETag"]
            packages = len(json.loads(response.read())["packages"])
        sync_ms = quick([galley, "sync", base + "/feed", "--store", reader, "-q"], args.runs * 4)
        curl_ms = quick(["curl", "-s", "-o", "/dev/null", "-H", f"If-None-Match: {etag}", base + "/feed"], args.runs * 4)
        ok = sync_ms < 50
        failed |= not ok
        print(f"unchanged feed of {packages} packages: galley sync {sync_ms:.1f} ms, curl (same 304) {curl_ms:.1f} ms; "
              f"goal galley < 50 ms: {'ok' if ok else 'MISSED'}")

    # 2. A new issue.
    big = bench_zip(galley, args.articles)
    source = os.path.join(OUT, f"source-{args.articles}")
    if not os.path.exists(os.path.join(source, ".complete")):
        shutil.rmtree(source, ignore_errors=True)
        timed([galley, "import", big, "--store", source, "-q"])
        open(os.path.join(source, ".complete"), "w").close()
    with served(galley, source) as base:
        with urllib.request.urlopen(base + "/feed") as response:
            package = json.loads(response.read())["packages"][0]
        fresh = os.path.join(OUT, "fresh")
        download = os.path.join(OUT, package["apple_id"] + ".zip")  # named as Dumpling names it

        def clean():
            shutil.rmtree(fresh, ignore_errors=True)
            if os.path.exists(download):
                os.remove(download)

        def sync_once():
            clean()
            return timed([galley, "sync", base + "/feed", "--store", fresh, "-q"])

        def curl_import_once():
            clean()
            start = time.perf_counter()
            subprocess.run(["curl", "-s", "-f", "-o", download, package["file_path"]], check=True)
            subprocess.run([galley, "import", download, "--store", fresh, "-q"], check=True)
            return time.perf_counter() - start

        syncs, peaks, peers = [], [], []
        for _ in range(args.runs):  # interleaved, so both see the same machine
            seconds, peak = sync_once()
            syncs.append(seconds)
            peaks.append(peak)
            peers.append(curl_import_once())
        clean()
        s, p = statistics.median(syncs), statistics.median(peers)
        ok = s / p <= 1.2 and max(peaks) < 64
        failed |= not ok
        print(f"new {package['size'] / 1e6:.0f} MB issue ({args.articles} articles): galley sync {s:.2f} s (peak {max(peaks):.1f} MB), "
              f"curl + galley import {p:.2f} s: {s / p:.2f}x; goal <= 1.2x and < 64 MB: {'ok' if ok else 'MISSED'}")
        paired = sorted(a / b for a, b in zip(syncs, peers))
        results.record(f"sync-{args.articles}", [{
            "job": "galley sync (new issue)", "peer": "curl -o + galley import",
            "size": f"{args.articles:,} articles ({package['size'] / 1e6:.0f} MB)", "ratio": round(s / p, 2),
            "range": [round(paired[0], 2), round(paired[-1], 2)], "peak_mb": round(max(peaks), 1), "peer_peak_mb": None,
            "goal": "<= 1.2x, < 64 MB", "met": ok, "better": "lower"}, {
            "job": "galley sync (unchanged feed)", "peer": "curl, the same 304", "size": f"{packages} packages",
            "ratio": round(sync_ms / curl_ms, 2), "range": None, "peak_mb": None, "peer_peak_mb": None,
            "goal": "under 50 ms", "met": sync_ms < 50, "better": "lower"}],
            "make release && python3 bench/sync_bench.py " + " ".join(sys.argv[1:]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
