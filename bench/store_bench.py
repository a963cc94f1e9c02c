#!/usr/bin/env python3
"""Benchmark: `galley import` against `unzip -q`, and store queries over 100 issues.

1. Imports the 300-article synthetic issue zip of bench/pack_bench.py into an empty store and
   compares with `unzip -q` of the same zip (goal: within 1.5 times, peak RSS under 64 MB).
2. Builds a store of 100 issues of 300 articles each (small media) and times `galley issues`,
   `galley articles`, and `galley search` (goal: each under 50 ms, process start included): a
   selective search, one whose words are in all 30,000 articles (ranked among the 5,000 most
   recently imported matches, the default), one whose word prefixes 17 terms, and for reference
   the broad one with `--rank-all` (BM25 over all 30,000 matches; no goal).

Build the binary with `make release` (static Swift runtime) first; `make bench` does.

Usage: bench/store_bench.py [--runs 5] [--galley PATH]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pack_bench import ROOT, WORK, generate, measure, timed  # noqa: E402


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
    args = parser.parse_args()
    g = args.galley
    out = os.path.join(WORK, "store-bench")
    os.makedirs(out, exist_ok=True)

    source = generate(300, 310)
    zip_path = os.path.join(out, "org.example.bench.300.zip")
    if not os.path.exists(zip_path):
        timed([g, "pack", source, "--output", out])
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

    big_store = os.path.join(out, "store-100")
    if not os.path.exists(os.path.join(big_store, ".complete")):
        shutil.rmtree(big_store, ignore_errors=True)
        zips = os.path.join(out, "zips-100")
        os.makedirs(zips, exist_ok=True)
        for index in range(100):
            issue = small_issue(index)
            subprocess.run([g, "pack", issue, "--output", zips, "--force"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([g, "import"] + sorted(os.path.join(zips, z) for z in os.listdir(zips)) + ["--store", big_store],
                       check=True, stdout=subprocess.DEVNULL)
        open(os.path.join(big_store, ".complete"), "w").close()
    for label, cmd, goal in [
        ("issues", [g, "issues", "--store", big_store, "--json"], True),
        ("articles --issue", [g, "articles", "--issue", "org.example.store.042", "--store", big_store, "--json"], True),
        ("articles --featured --limit 20", [g, "articles", "--featured", "--limit", "20", "--store", big_store, "--json"], True),
        ("search 'k3' (1,800 matches)", [g, "search", "k3", "--store", big_store, "--json"], True),
        ("search 'lighthouse ferry' (30,000)", [g, "search", "lighthouse ferry", "--store", big_store, "--json"], True),
        ("search 'k' (17 terms, 30,000)", [g, "search", "k", "--store", big_store, "--json"], True),
        ("search ... --issue", [g, "search", "lighthouse", "--issue", "org.example.store.042", "--store", big_store, "--json"], True),
        ("search '\"lighthouse ferry\"' (a phrase)", [g, "search", '"lighthouse ferry"', "--store", big_store, "--json"], True),
        ("search 'lighthouse ferry' --rank-all", [g, "search", "lighthouse ferry", "--rank-all", "--store", big_store, "--json"], False),
    ]:
        ms = quick(cmd, args.runs)
        verdict = ("(goal < 50 ms)" if ms < 50 else "(goal < 50 ms: NOT met)") if goal else "(reference, no goal)"
        print(f"{label:>38}: {ms:6.1f} ms over 100 issues x 300 articles {verdict}")
    ms = quick([g, "--version"], args.runs)
    print(f"{'process start (galley --version)':>38}: {ms:6.1f} ms")

if __name__ == "__main__":
    main()
