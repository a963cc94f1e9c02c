#!/usr/bin/env python3
"""Benchmark: `galley pack` against Info-ZIP `zip` on the same synthetic issue.

Generates (once, under bench/work/) a synthetic issue source of N articles with two images
each, then times `galley pack` and the fair peer, `zip -r -X -q -n <media>` (Info-ZIP told to
store media, as galley does), on the same tree. Prints wall time, peak memory (max RSS) and the
ratio. Not a test: timings depend on the machine; run it with `make bench`.

The 30,000-article issue has 10 KiB images (60,001 small files, the many-entries case);
the others 310 KiB ones, unless --image-kb says otherwise. Galley packs with `--thumbnails none`
(zip makes none; bench/thumbnail_bench.py measures pack with thumbnails of photos).

Usage: bench/pack_bench.py [--articles 300,3000,30000] [--image-kb KB] [--runs 3] [--galley PATH]
"""
import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "bench", "work")
JPEG_HEAD = bytes.fromhex("ffd8ffe000104a46494600010100000100010000")
# Image size (KiB) by article count: the 30,000-article issue is the many-small-files one.
IMAGE_KB = {300: 310, 3000: 310, 30000: 10}


def image_kb(count, asked):
    return asked if asked is not None else IMAGE_KB.get(count, 310)


def generate(articles, image_kb):
    """An issue source with `articles` articles of two images each; reused when present."""
    folder = os.path.join(WORK, f"issue-{articles}-{image_kb}k")
    marker = os.path.join(folder, ".complete")
    if os.path.exists(marker):
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "articles"))
    rng = random.Random(articles)
    with open(os.path.join(folder, "issue.yaml"), "w") as f:
        f.write(f"title: Synthetic issue\napple_id: org.example.bench.{articles}\npublish_date: 2026-01-01\n"
                "images: [cover.jpg]\n")
    with open(os.path.join(folder, "cover.jpg"), "wb") as f:
        f.write(JPEG_HEAD + os.urandom(image_kb * 1024))
    words = ("harbour ferry night light keeper tide quay crane fog horn log book storm lamp gull "
             "captain deck ramp baker nurse fish crossing winter water dark month").split()
    for i in range(articles):
        slug = f"{i + 1:05d}-article-{i + 1}"
        path = os.path.join(folder, "articles", slug)
        os.makedirs(path)
        paragraphs = []
        for p in range(12):
            paragraphs.append(" ".join(rng.choice(words) for _ in range(40)).capitalize() + ".")
        body = "\n\n".join(paragraphs[:4]) + "\n\n<!-- [ASSET: a.jpg] -->\n\n" + "\n\n".join(paragraphs[4:8]) \
            + "\n\n<!-- [ASSET: b.jpg] -->\n\n" + "\n\n".join(paragraphs[8:]) + "\n"
        with open(os.path.join(path, "article.md"), "w") as f:
            f.write(f"---\ntitle: Article {i + 1}\ndek: A synthetic article\nsection: Bench\n"
                    f"keywords: [bench, synthetic]\nassets:\n  - file: a.jpg\n    caption: First\n"
                    f"  - file: b.jpg\n    caption: Second\n---\n{body}")
        for name in ("a.jpg", "b.jpg"):
            with open(os.path.join(path, name), "wb") as f:
                f.write(JPEG_HEAD + os.urandom(image_kb * 1024))
    open(marker, "w").close()
    return folder


def tree_bytes(folder):
    total = 0
    for base, _, files in os.walk(folder):
        for name in files:
            total += os.path.getsize(os.path.join(base, name))
    return total


def settle(binary):
    """Drops `binary`'s pages from the page cache (written out first), so its runs count them as
    an installed binary's are counted. Peak RSS includes the pages of the binary a process has
    mapped (about 20 MB of galley's at start); right after `make release` they are the linker's
    freshly written pages, which this kernel keeps in large folios and maps in bigger pieces: the
    same binary measured 1.5-3 MB more than after it was read back from disk (2026-11-26). A
    missing binary is left for the bench's own message."""
    if not os.path.exists(binary):
        return
    fd = os.open(binary, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def timed(cmd, cwd=None):
    """Wall seconds and peak RSS (MB) of one run of `cmd`."""
    elapsed, peak, _ = timed_with_cpu(cmd, cwd)
    return elapsed, peak


def timed_with_cpu(cmd, cwd=None):
    """Wall seconds, peak RSS (MB) and CPU seconds (user and system, all threads) of one run of
    `cmd`. Standard error goes to a file, not a pipe: a pipe read only after the process ends
    would block a chatty one for ever."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            sys.exit(f"command failed: {' '.join(cmd)}\n{err.read().decode(errors='replace')[-4000:]}")
    return elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def measure(cmd, runs, cleanup, cwd=None):
    times, peaks = [], []
    for _ in range(runs):
        cleanup()
        elapsed, peak = timed(cmd, cwd)
        times.append(elapsed)
        peaks.append(peak)
    return statistics.median(times), max(peaks)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", default="300,3000,30000", help="comma-separated article counts (2 images each)")
    parser.add_argument("--image-kb", type=int, default=None, help="size of each image in KiB (default: 310, 10 at 30,000)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--galley", default=os.path.join(ROOT, ".build", "release", "galley"))
    args = parser.parse_args()
    if not os.path.exists(args.galley):
        sys.exit(f"no galley binary at {args.galley}: run `make release` first")
    settle(args.galley)
    out = os.path.join(WORK, "out")
    os.makedirs(out, exist_ok=True)
    print("galley fsyncs the zip before moving it into place; `zip -n` does not, so the peer is timed")
    print("both as it is and followed by `sync FILE`, the same durability (the fair comparison).")
    print(f"{'issue':>26} {'size':>7} {'galley':>8} {'zip -n':>8} {'+sync':>8} {'ratio':>6} {'ratio+sync':>10} "
          f"{'galley RSS':>10} {'zip RSS':>8}")
    ok = True
    rows = []
    for count in [int(c) for c in args.articles.split(",")]:
        source = generate(count, image_kb(count, args.image_kb))
        size = tree_bytes(source)
        target = os.path.join(out, f"org.example.bench.{count}.zip")
        peer = os.path.join(out, "peer.zip")

        def clean():
            for path in (target, peer):
                if os.path.exists(path):
                    os.remove(path)
            # Flush earlier runs' dirty pages so no run pays for another's write-back.
            os.sync()

        # Warm the page cache so both tools read from memory.
        timed(["zip", "-r", "-X", "-q", "-n", ".jpg", peer, "."], cwd=source)
        zip_cmd = ["zip", "-r", "-X", "-q", "-n", ".jpg:.jpeg:.png:.gif:.mp3:.m4a:.mp4", peer, "."]
        # --thumbnails none: zip makes no thumbnails, and the synthetic pictures (random bytes
        # behind a JPEG header) cannot be decoded, so libvips would only fail on each of them.
        # The three in turn, run after run: this machine's speed drifts by minutes, and three
        # galley runs followed by three of zip's measured the drift as much as the tools.
        runs = {"galley": [], "zip": [], "sync": []}
        for _ in range(args.runs):
            for key, cmd, cwd in (("galley", [args.galley, "pack", source, "--output", out, "--thumbnails", "none"], None),
                                  ("zip", zip_cmd, source),
                                  ("sync", ["sh", "-c", " ".join(zip_cmd) + f" && sync {peer}"], source)):
                clean()
                runs[key].append(timed(cmd, cwd))
        clean()
        g_time, g_rss = statistics.median(t for t, _ in runs["galley"]), max(p for _, p in runs["galley"])
        z_time, z_rss = statistics.median(t for t, _ in runs["zip"]), max(p for _, p in runs["zip"])
        s_time = statistics.median(t for t, _ in runs["sync"])
        ratio, ratio_sync = g_time / z_time, g_time / s_time
        label = f"{count} articles, {2 * count + 1} images"
        print(f"{label:>26} {size / 1e6:6.0f}M {g_time:7.2f}s {z_time:7.2f}s {s_time:7.2f}s {ratio:6.2f} {ratio_sync:10.2f} "
              f"{g_rss:9.1f}M {z_rss:7.1f}M")
        print(f"{'':>26} runs: galley {' '.join(f'{t:.2f}' for t, _ in runs['galley'])}; "
              f"zip -n + sync {' '.join(f'{t:.2f}' for t, _ in runs['sync'])}")
        met = ratio_sync <= 1.0 and g_rss < 64
        ok = ok and met
        paired = sorted(g / s for (g, _), (s, _) in zip(runs["galley"], runs["sync"]))
        rows.append({"job": "galley pack --thumbnails none", "peer": "zip -n + sync", "size": f"{count:,} articles ({size / 1e6:.0f} MB)",
                     "ratio": round(ratio_sync, 2), "range": [round(paired[0], 2), round(paired[-1], 2)],
                     "peak_mb": round(g_rss, 1), "peer_peak_mb": round(z_rss, 1), "goal": "<= 1.0x, < 64 MB", "met": met,
                     "better": "lower"})
    import results
    results.record("pack", rows, "make release && python3 bench/pack_bench.py " + " ".join(sys.argv[1:]))
    print("goal (ratio+sync <= 1.00 and galley RSS < 64 MB at every size): " + ("met" if ok else "NOT met"))


if __name__ == "__main__":
    main()
