#!/usr/bin/env python3
"""Benchmark: `galley validate` (full check) against `unzip -tq` on the same synthetic issue zip.

Packs the synthetic issues of bench/pack_bench.py with galley, then times a full validation
(central directory, every entry inflated and CRC-checked, manifest, references, bodies, media)
against Info-ZIP's `unzip -tq`, which only tests CRCs. Prints wall time, peak RSS and the ratio.
Goal (issue 12): ratio <= 1.0 at every size, including 30,000 articles with 10 KiB images
(60,001 small files), and peak memory under 64 MB.

Usage: bench/validate_bench.py [--articles 300,3000,30000] [--runs 3] [--galley PATH]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pack_bench import ROOT, WORK, generate, image_kb, measure, settle, timed  # noqa: E402
import results  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", default="300,3000,30000")
    parser.add_argument("--image-kb", type=int, default=None, help="size of each image in KiB (default: 310, 10 at 30,000)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--galley", default=os.path.join(ROOT, ".build", "release", "galley"))
    args = parser.parse_args()
    settle(args.galley)
    out = os.path.join(WORK, "validate")
    os.makedirs(out, exist_ok=True)
    print(f"{'issue':>26} {'zip':>8} {'validate':>9} {'unzip -tq':>10} {'ratio':>6} {'galley RSS':>11} {'unzip RSS':>10}")
    ok = True
    rows = []
    for count in [int(c) for c in args.articles.split(",")]:
        source = generate(count, image_kb(count, args.image_kb))
        zip_path = os.path.join(out, f"org.example.bench.{count}.zip")
        if not os.path.exists(zip_path):
            timed([args.galley, "pack", source, "--output", out])
        size = os.path.getsize(zip_path)
        timed(["unzip", "-tq", zip_path])  # warm the page cache
        g_time, g_rss = measure([args.galley, "validate", zip_path], args.runs, lambda: None)
        u_time, u_rss = measure(["unzip", "-tq", zip_path], args.runs, lambda: None)
        ratio = g_time / u_time
        label = f"{count} articles, {2 * count + 1} images"
        print(f"{label:>26} {size / 1e6:7.0f}M {g_time:8.2f}s {u_time:9.2f}s {ratio:6.2f} {g_rss:10.1f}M {u_rss:9.1f}M")
        met = ratio <= 1.0 and g_rss < 64
        ok = ok and met
        rows.append({"job": "galley validate", "peer": "unzip -tq", "size": f"{count:,} articles ({size / 1e6:.0f} MB)",
                     "ratio": round(ratio, 2), "range": None, "peak_mb": round(g_rss, 1), "peer_peak_mb": round(u_rss, 1),
                     "goal": "<= 1.0x, < 64 MB", "met": met, "better": "lower"})
    results.record("validate", rows, "make release && python3 bench/validate_bench.py " + " ".join(sys.argv[1:]))
    print("goal (ratio <= 1.0 and galley RSS < 64 MB at every size): " + ("met" if ok else "NOT met"))


if __name__ == "__main__":
    main()
