#!/usr/bin/env python3
"""Benchmark: the store's queries, imports and deletes at 100 issues against the same at many.

For each backend (SQLite; PostgreSQL with --backend postgres or both, on a throwaway cluster of
scripts/pg-test-server.sh), two stores are made from one 300-article issue of
bench/store_bench.py: imported, then grown with bench/grow_store.py to 100 issues (30,000
articles) and to --issues issues (default 10,000: 3 million articles). On each:

1. every query of the CLI (`issues`, an issue's articles, a page of all articles, by date,
   featured, searches broad and rare), p50 and p99 over --runs runs, process start included;
2. the same through `galley serve` (bench/store_bench.py's paths, each request a new URL so
   no kept answer serves it), p50 and p99 over --requests requests, first on one keep-alive
   connection, then over 64 at once, and serve's peak resident memory after both;
3. the import of one more 300-article issue and its delete.

Each row is the figure at --issues over the figure at 100 (goal: no query more than 2x, imports
and deletes within 2x, serve's peak memory within 2x); serve's p99 at --issues has its own goal
(under 20 ms).

Build the binary with `make release` first.

Usage: bench/capacity_bench.py [--issues 10000] [--runs 11] [--requests 200]
                               [--backend sqlite|postgres|both] [--galley PATH]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pack_bench import ROOT, WORK  # noqa: E402
from store_bench import serve_latencies, small_issue  # noqa: E402
import results  # noqa: E402

TEMPLATE = "org.example.store.000"


def packed(g, index):
    """Issue `index` of store_bench's small issues, packed once."""
    out = os.path.join(WORK, "capacity-zips")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"org.example.store.{index:03d}.zip")
    if not os.path.exists(path):
        subprocess.run([g, "pack", small_issue(index), "-o", out, "-q"], check=True, stdout=subprocess.DEVNULL)
    return path


def timed_ms(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def percentiles(times):
    times = sorted(times)
    return statistics.median(times), times[max(0, int(len(times) * 0.99) - 1)]


def grown(g, store, issues, settle):
    subprocess.run([g, "import", packed(g, 0), "--store", store, "-q"], check=True, stdout=subprocess.DEVNULL)
    start = time.perf_counter()
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "grow_store.py"), store, "--from", TEMPLATE,
                    "--copies", str(issues - 1)], check=True)
    settle(store)
    print(f"  grown to {issues:,} issues in {time.perf_counter() - start:.0f} s")


def measure(g, store, issues, args):
    middle = f"{TEMPLATE}.c{issues // 2}"
    cli = [
        ("issues", ["issues", "--json"]),
        ("articles of an issue", ["articles", "--issue", middle, "--json"]),
        ("articles, a page", ["articles", "--limit", "20", "--json"]),
        ("articles by date, a page", ["articles", "--by-date", "--limit", "20", "--json"]),
        ("featured articles, a page", ["articles", "--featured", "--limit", "20", "--json"]),
        ("search, broad", ["search", "lighthouse ferry", "--json"]),
        ("search, rare", ["search", "k3", "--issue", middle, "--json"]),
    ]
    figures = {}
    for label, cmd in cli:
        figures["CLI " + label] = percentiles([timed_ms([g] + cmd + ["--store", store]) for _ in range(args.runs)])
    for label, p50, p99 in serve_latencies(g, store, args.requests, issue=middle):
        figures["serve " + label] = (p50, p99)
    stats = {}
    for label, p50, p99 in serve_latencies(g, store, args.requests, issue=middle, connections=64, stats=stats):
        figures["serve, 64 connections, " + label] = (p50, p99)
    figures["serve's peak memory (MB)"] = (stats["peak_kb"] / 1024, stats["peak_kb"] / 1024)
    imports, deletes = [], []
    for _ in range(3):
        imports.append(timed_ms([g, "import", packed(g, 1), "--store", store, "-q"]))
        deletes.append(timed_ms([g, "delete", "org.example.store.001", "--yes", "--store", store, "-q"]))
    figures["import of one more issue"] = (statistics.median(imports), max(imports))
    figures["delete of it"] = (statistics.median(deletes), max(deletes))
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--issues", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--galley", default=os.path.join(ROOT, ".build", "release", "galley"))
    args = parser.parse_args()
    g = args.galley
    work = tempfile.mkdtemp(prefix="galley-capacity.")
    cluster = None
    rows = []
    try:
        backends = []
        if args.backend in ("sqlite", "both"):
            def sqlite_store(name):
                return os.path.join(work, name)
            backends.append(("SQLite", sqlite_store, lambda store: subprocess.run(
                [g, "store", "gc", "--store", store, "-q"], check=True, stdout=subprocess.DEVNULL)))
        if args.backend in ("postgres", "both"):
            cluster = os.path.join(work, "pg")
            url = subprocess.run(["bash", os.path.join(ROOT, "scripts", "pg-test-server.sh"), "start", cluster],
                                 check=True, capture_output=True, text=True).stdout.strip()
            base = url.rsplit("/", 1)[0]

            def pg_store(name):
                subprocess.run(["psql", "-X", "-q", url, "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
                return f"{base}/{name}?blobs={os.path.join(work, 'blobs-' + name)}"
            backends.append(("PostgreSQL", pg_store, lambda store: subprocess.run(
                ["psql", "-X", "-q", store.split("?")[0], "-c", "VACUUM ANALYZE"], check=True, capture_output=True)))
        for backend, make, settle in backends:
            measured = {}
            for issues in (100, args.issues):
                print(f"{backend}, {issues:,} issues:")
                store = make(f"capacity_{issues}")
                grown(g, store, issues, settle)
                measured[issues] = measure(g, store, issues, args)
            small, big = measured[100], measured[args.issues]
            for label in small:
                ratio = big[label][0] / small[label][0]
                worst = big[label][1] / small[label][1]
                serve_goal = label.startswith("serve ") or label.startswith("serve, ")
                met = ratio <= 2.0 and (not serve_goal or big[label][1] < 20)
                unit = "MB" if "(MB)" in label else "ms"
                print(f"  {label:>36}: {small[label][0]:7.1f} -> {big[label][0]:7.1f} {unit} (p99 {big[label][1]:6.1f}), "
                      f"{ratio:.2f}x")
                rows.append({"job": f"{label}, {backend}", "peer": "the same at 100 issues",
                             "size": f"{args.issues:,} issues ({args.issues * 300:,} articles)",
                             "ratio": round(ratio, 2), "range": sorted([round(ratio, 2), round(worst, 2)]),
                             "peak_mb": None, "peer_peak_mb": None,
                             "goal": "<= 2x" + (", p99 < 20 ms" if serve_goal else ""), "met": met, "better": "lower"})
        results.record("capacity", rows, "make release && python3 bench/capacity_bench.py " + " ".join(sys.argv[1:]))
    finally:
        if cluster:
            subprocess.run(["bash", os.path.join(ROOT, "scripts", "pg-test-server.sh"), "stop", cluster], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
