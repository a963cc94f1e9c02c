#!/usr/bin/env python3
"""Benchmark: `galley sync` of a corrected issue with a delta update against the same sync with
`--no-delta` (the whole zip), on the same loopback server.

The synthetic issue of bench/pack_bench.py (300 articles of two 310 KiB pictures, 190 MB; with
--articles 30000 the 30,000-article one) is packed, then packed again after a correction: one
article's text (`text`), one picture replaced (`picture`), or one article added (`article`),
each with a later `last_updated`. A reader store that followed the first version syncs the
second, from `galley serve` and from nginx serving `galley publish`'s folder: bytes fetched
(goal for `text`: at most 1% of the zip, directory included) and wall time against the whole
download's (goal: at most 0.1x). The reassembled zip is checked by sync itself against the
feed's SHA-256.

Usage: bench/delta_bench.py [--articles 300] [--runs 3] [--galley PATH]
Build with `make release` first; nginx comes from `scripts/setup.sh --bench` (or --test-peers).
"""
import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pack_bench import ROOT, WORK, generate, image_kb, settle  # noqa: E402
from serve_bench import free_port, wait_for  # noqa: E402
from sync_bench import served  # noqa: E402
import results  # noqa: E402

OUT = os.path.join(WORK, "delta-bench")


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def corrected(source, kind, articles):
    """A copy of `source` with one correction of `kind` and a later last_updated."""
    target = os.path.join(OUT, f"source-{articles}-{kind}")
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    with open(os.path.join(target, "issue.yaml"), "a") as f:
        f.write("last_updated: 2026-01-02T09:00:00Z\n")
    middle = sorted(os.listdir(os.path.join(target, "articles")))[articles // 2]
    folder = os.path.join(target, "articles", middle)
    if kind == "text":
        path = os.path.join(folder, "article.md")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace("First", "Corrected", 1))
    elif kind == "picture":
        with open(os.path.join(folder, "a.jpg"), "r+b") as f:
            f.seek(64)
            f.write(os.urandom(4096))
    else:
        added = os.path.join(target, "articles", "99999-added")
        shutil.copytree(folder, added)
    return target


def pack(galley, source, name):
    out = os.path.join(OUT, name)
    shutil.rmtree(out, ignore_errors=True)
    run([galley, "pack", source, "-o", out + "/", "-q", "--thumbnails", "none"])
    return os.path.join(out, [n for n in os.listdir(out) if n.endswith(".zip")][0])


@contextlib.contextmanager
def nginx(site):
    port = free_port()
    folder = os.path.join(OUT, "nginx")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    conf = os.path.join(folder, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off; worker_processes 1; pid {folder}/nginx.pid; error_log {folder}/error.log;
events {{ worker_connections 64; }}
http {{ access_log off; sendfile on; client_body_temp_path {folder}; proxy_temp_path {folder};
  fastcgi_temp_path {folder}; uwsgi_temp_path {folder}; scgi_temp_path {folder};
  server {{ listen 127.0.0.1:{port}; root {site}; }} }}
""")
    server = subprocess.Popen(["nginx", "-c", conf, "-p", folder], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(f"http://127.0.0.1:{port}/feed.json")
        yield f"http://127.0.0.1:{port}/feed.json"
    finally:
        server.terminate()
        server.wait(timeout=30)


def sync_cost(galley, feed, held, delta):
    """Seconds and the `downloads` entry of one sync from a copy of `held` (the first version)."""
    reader = os.path.join(OUT, "reader")
    shutil.rmtree(reader, ignore_errors=True)
    shutil.copytree(held, reader)
    command = [galley, "sync", feed, "--store", reader, "--json"] + ([] if delta else ["--no-delta"])
    start = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    summary = json.loads(done.stdout)
    return seconds, summary["downloads"][0]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kinds", default="text,picture,article")
    parser.add_argument("--galley", default=os.path.join(ROOT, ".build", "release", "galley"))
    args = parser.parse_args()
    galley = os.path.abspath(args.galley)
    if not os.path.exists(galley):
        sys.exit(f"delta_bench: no {galley}; run `make release` first")
    if shutil.which("nginx") is None:
        sys.exit("delta_bench: nginx is missing (scripts/setup.sh --bench)")
    settle(galley)
    os.makedirs(OUT, exist_ok=True)
    source = generate(args.articles, image_kb(args.articles, None))
    first = pack(galley, source, "v1")
    rows, failed = [], False
    for kind in args.kinds.split(","):
        second = pack(galley, corrected(source, kind, args.articles), f"v2-{kind}")
        size = os.path.getsize(second)
        origin = os.path.join(OUT, "origin")
        held = os.path.join(OUT, "held")
        site = os.path.join(OUT, "site")
        for path in (origin, held, site):
            shutil.rmtree(path, ignore_errors=True)
        run([galley, "import", first, "--store", origin, "-q"])
        with served(galley, origin) as base:
            run([galley, "sync", base + "/feed", "--store", held, "-q"])
        run([galley, "import", second, "--store", origin, "--force", "-q"])
        run([galley, "publish", "--store", origin, "--to", site, "-q"])
        for host, serving, path in (("galley serve", served(galley, origin), "/feed"), ("nginx", nginx(site), "")):
            with serving as base:
                feed = base + path
                deltas, wholes, fetched = [], [], None
                for _ in range(args.runs):  # interleaved, so both see the same machine
                    seconds, cost = sync_cost(galley, feed, held, True)
                    if not cost["delta"]:
                        sys.exit(f"delta_bench: the {kind} correction from {host} was not a delta: {cost}")
                    deltas.append(seconds)
                    fetched = cost["bytes_fetched"]
                    wholes.append(sync_cost(galley, feed, held, False)[0])
            ratio = statistics.median(deltas) / statistics.median(wholes)
            share = fetched / size
            paired = sorted(a / b for a, b in zip(deltas, wholes))
            goal = "<= 0.1x, <= 1% fetched" if kind == "text" else "<= 0.1x"
            met = ratio <= 0.1 and (share <= 0.01 or kind != "text")
            failed |= not met
            print(f"{kind} correction from {host}: {fetched / 1e6:.2f} MB of {size / 1e6:.0f} MB fetched ({share:.2%}), "
                  f"{statistics.median(deltas):.2f} s against {statistics.median(wholes):.2f} s whole: {ratio:.3f}x; "
                  f"goal {goal}: {'ok' if met else 'MISSED'}")
            rows.append({"job": f"galley sync, delta ({kind} corrected, {share:.2%} fetched)", "peer": f"--no-delta, from {host}",
                         "size": f"{args.articles:,} articles ({size / 1e6:.0f} MB)", "ratio": round(ratio, 3),
                         "range": [round(paired[0], 3), round(paired[-1], 3)], "peak_mb": None, "peer_peak_mb": None,
                         "goal": goal, "met": met, "better": "lower"})
    results.record(f"delta-{args.articles}", rows, "make release && python3 bench/delta_bench.py " + " ".join(sys.argv[1:]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
