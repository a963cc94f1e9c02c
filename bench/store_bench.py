#!/usr/bin/env python3
"""Benchmark: `galley import` against `unzip -q`, and store queries over 100 issues.

1. Imports the 300-article synthetic issue zip of bench/pack_bench.py into an empty store and
   compares with `unzip -q` of the same zip (goal: within 1.5 times, peak RSS under 64 MB).
2. Builds a store of 100 issues of 300 articles each (small media) and times `galley issues`,
   `galley articles`, and `galley search` (goal: each under 50 ms, process start included): a
   selective search, one whose words are in all 30,000 articles (ranked among the 5,000 most
   recently imported matches, the default), one whose word prefixes 17 terms, and for reference
   the broad one with `--rank-all` (BM25 over all 30,000 matches; no goal).

With --backend postgres (scripts/setup.sh --postgres installs the server; a throwaway cluster
on a loopback port is started and removed, scripts/pg-test-server.sh), the same store lives in
PostgreSQL with a blob folder, beside SQLite's figures in the same run:

3. The 300- and 3,000-article imports into each backend, alternating (goal: PostgreSQL within
   1.5 times SQLite).
4. The query set above through the command line on each backend, and through `galley serve` on
   each (every request a different URL, so the server's kept answers never serve it: each one
   runs its query), p50 and p99 over 200 requests a query on one keep-alive connection (goal:
   p99 under 20 ms on PostgreSQL).

Build the binary with `make release` (static Swift runtime) first; `make bench` does.

Usage: bench/store_bench.py [--runs 5] [--galley PATH] [--backend sqlite|postgres]
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
from pack_bench import ROOT, WORK, generate, measure, settle, timed  # noqa: E402
import results  # noqa: E402


def small_issue(index, articles=300):
    folder = os.path.join(WORK, "store-issues", f"issue-{index:03d}")
    if os.path.exists(os.path.join(folder, ".complete")):
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "articles"))
    with open(os.path.join(folder, "issue.yaml"), "w") as f:
        f.write(f"title: Issue {index}\napple_id: org.example.store.{index:03d}\n"
                f"publish_date: 2020-{1 + index % 12:02d}-{1 + index % 28:02d}\n")
    for i in range(articles):
        path = os.path.join(folder, "articles", f"{i + 1:04d}-a{i}")
        os.makedirs(path)
        with open(os.path.join(path, "article.md"), "w") as f:
            f.write(f"---\ntitle: Article {i} of issue {index}\ntype: {'feature' if i % 5 == 0 else 'news'}\n"
                    f"keywords: [harbour, k{i % 17}]\n---\nThe harbour at night, lighthouse number {i}, ferry {index}.\n")
    open(os.path.join(folder, ".complete"), "w").close()
    return folder


def quick(cmd, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--galley", default=os.path.join(ROOT, ".build", "release", "galley"))
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    settle(args.galley)
    if args.backend == "postgres":
        return postgres(args)
    g = args.galley
    out, zip_path = issue_300(g)
    store = os.path.join(out, "store")
    unzipped = os.path.join(out, "unzipped")

    def clean():
        shutil.rmtree(store, ignore_errors=True)
        shutil.rmtree(unzipped, ignore_errors=True)
        os.sync()

    i_time, i_rss = measure([g, "import", zip_path, "--store", store], 3, clean)
    u_time, u_rss = measure(["unzip", "-q", zip_path, "-d", unzipped], 3, clean)
    print(f"import 300 articles / 190 MB: galley {i_time:.2f}s ({i_rss:.1f} MB), unzip -q {u_time:.2f}s "
          f"({u_rss:.1f} MB), ratio {i_time / u_time:.2f} (goal <= 1.5, RSS < 64 MB)")

    rows = [{"job": "galley import, SQLite", "peer": "unzip -q", "size": "300 articles (190 MB)",
             "ratio": round(i_time / u_time, 2), "range": None, "peak_mb": round(i_rss, 1), "peer_peak_mb": round(u_rss, 1),
             "goal": "<= 1.5x, < 64 MB", "met": i_time / u_time <= 1.5 and i_rss < 64, "better": "lower"}]
    big_store = store_100(g, out)
    start_ms = quick([g, "--version"], args.runs)
    for label, cmd, goal in queries(g, big_store):
        ms = quick(cmd, args.runs)
        verdict = ("(goal < 50 ms)" if ms < 50 else "(goal < 50 ms: NOT met)") if goal else "(reference, no goal)"
        print(f"{label:>38}: {ms:6.1f} ms over 100 issues x 300 articles {verdict}")
        # The peer of a query is the process start itself: what is left is the query's own work.
        rows.append({"job": label.strip(), "peer": "galley --version", "size": "100 issues x 300 articles",
                     "ratio": round(ms / start_ms, 2), "range": None, "peak_mb": None, "peer_peak_mb": None,
                     "goal": f"under 50 ms ({ms:.0f} ms)" if goal else f"none ({ms:.0f} ms)", "met": ms < 50 if goal else None,
                     "better": "lower"})
    print(f"{'process start (galley --version)':>38}: {start_ms:6.1f} ms")
    results.record("store", rows, "make release && python3 bench/store_bench.py " + " ".join(sys.argv[1:]))


def issue_300(g, articles=300):
    """The bench's folder, and the synthetic issue of `articles` articles packed into it once."""
    out = os.path.join(WORK, "store-bench")
    os.makedirs(out, exist_ok=True)
    zip_path = os.path.join(out, f"org.example.bench.{articles}.zip")
    if not os.path.exists(zip_path):
        timed([g, "pack", generate(articles, 310), "--output", out])
    return out, zip_path


def zips_100(g, out):
    """The 100 issues of 300 articles, packed once."""
    zips = os.path.join(out, "zips-100")
    if not os.path.exists(os.path.join(zips, ".complete")):
        os.makedirs(zips, exist_ok=True)
        for index in range(100):
            issue = small_issue(index)
            subprocess.run([g, "pack", issue, "--output", zips, "--force"], check=True, stdout=subprocess.DEVNULL)
        open(os.path.join(zips, ".complete"), "w").close()
    return sorted(os.path.join(zips, z) for z in os.listdir(zips) if z.endswith(".zip"))


def store_100(g, out):
    big_store = os.path.join(out, "store-100")
    if not os.path.exists(os.path.join(big_store, ".complete")):
        shutil.rmtree(big_store, ignore_errors=True)
        subprocess.run([g, "import"] + zips_100(g, out) + ["--store", big_store], check=True, stdout=subprocess.DEVNULL)
        open(os.path.join(big_store, ".complete"), "w").close()
    return big_store


def queries(g, big_store):
    return [
        ("issues", [g, "issues", "--store", big_store, "--json"], True),
        ("articles --issue", [g, "articles", "--issue", "org.example.store.042", "--store", big_store, "--json"], True),
        ("articles --featured --limit 20", [g, "articles", "--featured", "--limit", "20", "--store", big_store, "--json"], True),
        ("search 'k3' (1,800 matches)", [g, "search", "k3", "--store", big_store, "--json"], True),
        ("search 'lighthouse ferry' (30,000)", [g, "search", "lighthouse ferry", "--store", big_store, "--json"], True),
        ("search 'k' (17 terms, 30,000)", [g, "search", "k", "--store", big_store, "--json"], True),
        ("search ... --issue", [g, "search", "lighthouse", "--issue", "org.example.store.042", "--store", big_store, "--json"], True),
        ("search '\"lighthouse ferry\"' (a phrase)", [g, "search", '"lighthouse ferry"', "--store", big_store, "--json"], True),
        ("search 'lighthouse ferry' --rank-all", [g, "search", "lighthouse ferry", "--rank-all", "--store", big_store, "--json"], False),
    ]


# The query set as `galley serve` answers it (paths), for the serve half of --backend postgres.
SERVE_QUERIES = [
    ("/issues", "issues"),
    ("/issues/org.example.store.042/articles?limit=20", "articles of an issue"),
    ("/articles?featured=true&limit=20", "featured articles"),
    ("/articles/{article}", "one article"),
    ("/search?q=k3", "search, 1,800 matches"),
    ("/search?q=lighthouse+ferry", "search, 30,000 matches"),
    ("/search?q=%22lighthouse+ferry%22", "search, a phrase"),
]


def serve_latencies(g, store, requests=200, issue="org.example.store.042", connections=1, stats=None):
    """p50 and p99 (ms) of each SERVE_QUERIES path through `galley serve --store STORE`, the
    issue-named ones for `issue`: `requests` of each, over `connections` keep-alive connections
    at once. `stats`, a dict, gets serve's peak resident memory (`peak_kb`, VmHWM)."""
    import http.client
    import json as jsonlib
    server = subprocess.Popen([g, "serve", "--store", store, "--port", "0", "--json", "-q"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    try:
        text = ""
        while True:  # the listening document, pretty-printed over several lines
            line = server.stdout.readline().decode()
            if not line:
                raise RuntimeError("galley serve stopped before it listened")
            text += line
            if line.startswith("}"):
                break
        port = jsonlib.loads(text)["port"]
        import threading
        from concurrent.futures import ThreadPoolExecutor
        local = threading.local()  # one keep-alive connection per thread

        def get(path):
            if not hasattr(local, "connection"):
                local.connection = http.client.HTTPConnection("127.0.0.1", port)
            local.connection.request("GET", path)
            response = local.connection.getresponse()
            body = response.read()
            if response.status != 200:
                raise RuntimeError(f"{path}: {response.status} {body[:200]!r}")
            return body

        def timed(path):
            start = time.perf_counter()
            get(path)
            return (time.perf_counter() - start) * 1000

        article = jsonlib.loads(get(f"/issues/{issue}/articles?limit=1"))["items"][0]["global_id"]
        results = []
        with ThreadPoolExecutor(max_workers=connections) as pool:
            for path, label in SERVE_QUERIES:
                path = path.replace("{article}", article).replace("org.example.store.042", issue)
                # A new URL each time: the server's kept answers never serve it.
                urls = [path + ("&" if "?" in path else "?") + f"bench={n}" for n in range(requests)]
                times = sorted(pool.map(timed, urls) if connections > 1 else map(timed, urls))
                results.append((label, statistics.median(times), times[int(len(times) * 0.99) - 1]))
        if stats is not None:
            with open(f"/proc/{server.pid}/status") as status:
                stats["peak_kb"] = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
        return results
    finally:
        server.terminate()
        server.wait()


def postgres(args):
    g = args.galley
    out, zip_path = issue_300(g)
    cluster = tempfile.mkdtemp(prefix="galley-bench-pg.")
    url = subprocess.run(["bash", os.path.join(ROOT, "scripts", "pg-test-server.sh"), "start", os.path.join(cluster, "pg")],
                         check=True, capture_output=True, text=True).stdout.strip()
    base = url.rsplit("/", 1)[0]
    blobs = os.path.join(out, "pg-blobs")

    def database(name):
        subprocess.run(["psql", url, "-q", "-c", f"DROP DATABASE IF EXISTS {name}", "-c", f"CREATE DATABASE {name}"],
                       check=True, capture_output=True)
        shutil.rmtree(blobs + "-" + name, ignore_errors=True)
        return f"{base}/{name}?blobs={blobs}-{name}"

    try:
        sqlite_store = os.path.join(out, "store")
        pg_stores = []

        def clean_sqlite():
            shutil.rmtree(sqlite_store, ignore_errors=True)
            os.sync()

        def clean_pg():
            pg_stores.append(database("import300"))
            os.sync()

        rows = []
        for articles in (300, 3000):
            _, issue_zip = issue_300(g, articles)
            s_times, p_times = [], []
            for _ in range(3):
                clean_sqlite()
                s_times.append(timed([g, "import", issue_zip, "--store", sqlite_store])[0])
                clean_pg()
                p_times.append(timed([g, "import", issue_zip, "--store", pg_stores[-1]])[0])
            s_med, p_med = statistics.median(s_times), statistics.median(p_times)
            size = os.path.getsize(issue_zip) / 1e6
            print(f"import {articles} articles / {size:.0f} MB: SQLite {s_med:.2f}s, PostgreSQL {p_med:.2f}s, "
                  f"ratio {p_med / s_med:.2f} (goal <= 1.5)")
            paired = sorted(a / b for a, b in zip(p_times, s_times))
            rows.append({"job": "galley import, PostgreSQL", "peer": "the same import, SQLite",
                         "size": f"{articles:,} articles ({size:.0f} MB)", "ratio": round(p_med / s_med, 2),
                         "range": [round(paired[0], 2), round(paired[-1], 2)], "peak_mb": None, "peer_peak_mb": None,
                         "goal": "<= 1.5x", "met": p_med / s_med <= 1.5, "better": "lower"})
        clean_sqlite()

        big_sqlite = store_100(g, out)
        big_pg = database("store100")
        start = time.perf_counter()
        subprocess.run([g, "import"] + zips_100(g, out) + ["--store", big_pg], check=True, stdout=subprocess.DEVNULL)
        print(f"import of the 100 issues into PostgreSQL: {time.perf_counter() - start:.1f} s")
        for (label, s_cmd, _), (_, p_cmd, _) in zip(queries(g, big_sqlite), queries(g, big_pg)):
            print(f"{label:>38}: SQLite {quick(s_cmd, args.runs):6.1f} ms, PostgreSQL {quick(p_cmd, args.runs):6.1f} ms "
                  "(command line, process start included)")
        for backend, store in [("SQLite", big_sqlite), ("PostgreSQL", big_pg)]:
            for label, p50, p99 in serve_latencies(g, store):
                goal = "" if backend == "SQLite" else (" (goal p99 < 20 ms)" if p99 < 20 else " (goal p99 < 20 ms: NOT met)")
                print(f"serve {backend:>10} {label:>24}: p50 {p50:6.2f} ms, p99 {p99:6.2f} ms{goal}")
        results.record("store-postgres", rows, "make release && python3 bench/store_bench.py " + " ".join(sys.argv[1:]))
    finally:
        subprocess.run(["bash", os.path.join(ROOT, "scripts", "pg-test-server.sh"), "stop", os.path.join(cluster, "pg")])
        shutil.rmtree(cluster, ignore_errors=True)

if __name__ == "__main__":
    main()
