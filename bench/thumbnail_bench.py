#!/usr/bin/env python3
"""Benchmark: `galley pack` with its thumbnails, made from photos, against libvips's own tool.

`pack_bench.py` packs with `--thumbnails none` (its pictures are random bytes, and `zip` makes
no thumbnails); this one measures the default: every picture gets a 350x350 thumbnail cut
around its most interesting part (libvips's attention crop). It generates (once, under
bench/work/) 20 photo-like JPEGs of 1800x1200 pixels with libvips's `vips` tool (smooth colour
fields and grain, about 400 KB each, decoded at full size for a 350-pixel crop as a magazine's
photos are) and an issue of N articles with two of them each (different paths: one thumbnail
per picture). The peer makes the same thumbnails with `vipsthumbnail` (the same library and
crop, two processes at once, one per core, each given half the pictures), then stores the
tree with `zip -r -X -q -n .jpg`. The two alternate run by run after a `sync`.

Goal (issue #12): peak RSS under 64 MB for every command. The time has no goal here (libvips's
work is the same on both sides); the ratio says what pack adds to it. The peer's memory is the
two processes' peaks added (they run at once).

Usage: bench/thumbnail_bench.py [--articles 300] [--runs 3] [--galley PATH]
Needs `vips` and `vipsthumbnail` (Debian's libvips-tools: `scripts/setup.sh --bench`).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pack_bench import ROOT, WORK, settle, timed  # noqa: E402
import results  # noqa: E402

PHOTOS = 20


def photos():
    """The 20 photos, made once with `vips` (perlin noise per channel, fine grain, JPEG Q 85)."""
    folder = os.path.join(WORK, "photos-1800x1200")
    marker = os.path.join(folder, ".complete")
    if os.path.exists(marker):
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    scratch = os.path.join(folder, "scratch")
    os.makedirs(scratch)
    def vips(*args):
        subprocess.run(["vips", *args], check=True, cwd=scratch)
    for i in range(PHOTOS):
        for band in range(3):
            vips("perlin", f"p{band}.v", "1800", "1200", "--cell-size", str(150 + 40 * band), "--seed", str(31 * i + band))
        vips("bandjoin", "p0.v p1.v p2.v", "rgb.v")
        vips("gaussnoise", "grain.v", "1800", "1200", "--mean", "0", "--sigma", "0.05")
        vips("add", "rgb.v", "grain.v", "sum.v")
        vips("linear", "sum.v", "scaled.v", "110", "128")
        vips("cast", "scaled.v", "bytes.v", "uchar")
        vips("copy", "bytes.v", "srgb.v", "--interpretation", "srgb")
        vips("jpegsave", "srgb.v", os.path.join(folder, f"photo-{i + 1:02d}.jpg"), "--Q", "85", "--strip")
    shutil.rmtree(scratch)
    open(marker, "w").close()
    return folder


def generate(count):
    """The issue source (for galley) and a copy of its pictures, hard-linked (for the peer)."""
    folder = os.path.join(WORK, f"thumbs-{count}")
    marker = os.path.join(folder, ".complete")
    source, peer = os.path.join(folder, "issue"), os.path.join(folder, "peer")
    if os.path.exists(marker):
        return source, peer
    shutil.rmtree(folder, ignore_errors=True)
    pictures = photos()
    os.makedirs(os.path.join(source, "articles"))
    with open(os.path.join(source, "issue.yaml"), "w") as f:
        f.write(f"title: Thumbnail bench\napple_id: org.example.thumbs.{count}\npublish_date: 2026-01-01\n"
                "images: [cover.jpg]\n")
    shutil.copy(os.path.join(pictures, "photo-01.jpg"), os.path.join(source, "cover.jpg"))
    n = 0
    for i in range(count):
        path = os.path.join(source, "articles", f"{i + 1:05d}-article-{i + 1}")
        os.makedirs(path)
        with open(os.path.join(path, "article.md"), "w") as f:
            f.write(f"---\ntitle: Article {i + 1}\nassets:\n  - file: a.jpg\n    caption: First\n"
                    f"  - file: b.jpg\n    caption: Second\n---\nA harbour at night.\n\n<!-- [ASSET: a.jpg] -->\n\n"
                    "The ferry crossing.\n\n<!-- [ASSET: b.jpg] -->\n")
        for name in ("a.jpg", "b.jpg"):
            shutil.copy(os.path.join(pictures, f"photo-{n % PHOTOS + 1:02d}.jpg"), os.path.join(path, name))
            n += 1
    shutil.copytree(source, peer, copy_function=os.link)
    open(marker, "w").close()
    return source, peer


def pictures_in(tree):
    found = []
    for base, _, files in os.walk(tree):
        found += [os.path.join(base, name) for name in files if name.endswith(".jpg") and not name.startswith("tn_")]
    return sorted(found)


def peer_run(peer, zip_path):
    """vipsthumbnail on two halves at once, then zip: wall seconds and the two peaks added (MB)."""
    pictures = pictures_in(peer)
    halves = [pictures[0::2], pictures[1::2]]
    start = time.perf_counter()
    procs = [subprocess.Popen(["vipsthumbnail", "--size", "350x350", "--smartcrop", "attention",
                               "-o", "tn_%s.jpg[Q=82,strip,optimize_coding]", *half],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for half in halves]
    peaks = []
    for proc in procs:
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit("vipsthumbnail failed")
        peaks.append(usage.ru_maxrss / 1024)
    thumbs = time.perf_counter() - start
    elapsed, _ = timed(["zip", "-r", "-X", "-q", "-n", ".jpg", zip_path, "."], cwd=peer)
    return thumbs + elapsed, sum(peaks)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--galley", default=os.path.join(ROOT, ".build", "release", "galley"))
    args = parser.parse_args()
    if not os.path.exists(args.galley):
        sys.exit(f"no galley binary at {args.galley}: run `make release` first")
    for tool in ("vips", "vipsthumbnail", "zip"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is missing: run `scripts/setup.sh --bench` (Debian's libvips-tools, zip)")
    settle(args.galley)
    source, peer = generate(args.articles)
    out = os.path.join(WORK, "out-thumbs")
    os.makedirs(out, exist_ok=True)
    target = os.path.join(out, f"org.example.thumbs.{args.articles}.zip")
    peer_zip = os.path.join(out, "peer.zip")

    def clean():
        for path in (target, peer_zip):
            if os.path.exists(path):
                os.remove(path)
        for base, _, files in os.walk(peer):
            for name in files:
                if name.startswith("tn_"):
                    os.remove(os.path.join(base, name))
        os.sync()

    galley_times, galley_peaks, peer_times, peer_peaks = [], [], [], []
    for _ in range(args.runs):
        clean()
        elapsed, peak = timed([args.galley, "pack", source, "--output", out + "/", "--quiet"])
        galley_times.append(elapsed)
        galley_peaks.append(peak)
        clean()
        elapsed, peak = peer_run(peer, peer_zip)
        peer_times.append(elapsed)
        peer_peaks.append(peak)
    clean()
    g, p = statistics.median(galley_times), statistics.median(peer_times)
    peak = max(galley_peaks)
    print(f"{'issue':>22} {'galley':>8} {'peer':>8} {'ratio':>6} {'galley RSS':>10} {'peer RSS':>9}")
    print(f"{args.articles:>13} articles {g:>7.2f}s {p:>7.2f}s {g / p:>6.2f} {peak:>8.1f}MB {max(peer_peaks):>7.1f}MB")
    print(f"goal: galley's peak under 64 MB: {'met' if peak < 64 else 'NOT met'}")
    paired = sorted(a / b for a, b in zip(galley_times, peer_times))
    results.record("thumbnails", [{
        "job": "galley pack (thumbnails)", "peer": "vipsthumbnail x2 + zip -n", "size": f"{args.articles:,} articles of photos",
        "ratio": round(g / p, 2), "range": [round(paired[0], 2), round(paired[-1], 2)], "peak_mb": round(peak, 1),
        "peer_peak_mb": round(max(peer_peaks), 1), "goal": "< 64 MB", "met": peak < 64, "better": "lower"}],
        "make release && python3 bench/thumbnail_bench.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
