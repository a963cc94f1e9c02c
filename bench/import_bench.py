#!/usr/bin/env python3
"""Benchmark: `galley import` against libarchive's own extraction (`bsdtar -xf`) and `unzip -q`.

Imports the synthetic issue zips of bench/pack_bench.py (300 and 3,000 articles with two 310 KiB
images each; 30,000 articles with two 10 KiB images each, about 60,000 entries) into a fresh
store, and extracts the same zips with bsdtar and unzip into fresh folders. The three commands
alternate run by run (so a slow stretch of the machine hits all three), earlier runs' dirty pages
are flushed before each run, and the medians are compared. bsdtar is the floor Galley builds on:
the same library reading the same zip with CRCs checked, writing only the files.

Goals (issue #12): galley import at most 1.5x bsdtar -xf at every size, peak RSS under 64 MB.

Build the binary with `make release` first; `make bench` does. bsdtar comes from Debian's
libarchive-tools (`scripts/setup.sh --bench`).

On ext4 without a journal (this machine's disk) the time to create files moves with what was
deleted in about the last minute: for every new inode the allocator skips, one by one, each inode
of the group freed that recently whose inode-table block is in the buffer cache (the kernel's
`recently_deleted`; the allocator reads that block in for the inode it takes, so dropping the
cache first does not help). Right after the previous run's 60,000 files were removed, `bsdtar
-xf` of the 30,000-article zip took 28 s (27.5 s of it in the kernel) instead of 3 s
(2026-11-26); with the cache dropped in between, bsdtar of the 3,000-article zip still spent
about 40% of its samples there and took 3.3-3.7 s instead of 1.8-2.2 s (2026-11-27). So no run
follows a deletion: each run's output is moved to a trash folder, the trash is emptied once a
size's runs are done, and the next size waits until a minute has passed since. Where the disk
has no room for a size's outputs (about four times the zip per run), they are deleted between
runs as before and the bench says so. Each run also starts after the page cache is dropped
(as root; `drop_page_cache`) and the zip is read back, so every tool reads the zip and its
start-up code from memory.
This machine is a virtual machine whose host takes free memory back (virtio-balloon's free page
reporting): a page first written a few seconds after it was freed costs a fault in the host, so
writing 2 GB into a file took 0.5 s right after the cache was dropped and 3.3 s 15 s later. That
is left in: every tool pays it for the memory it writes, as it would on such a machine anywhere.
`--tmpfs` copies the zip to /dev/shm and extracts there: no disk, no allocator, the same work
for every run, which shows what each tool costs itself. The goal is judged on disk; the tmpfs
figures say how much of a ratio is Galley's own work.

Usage: bench/import_bench.py [--articles 300,3000,30000] [--runs 5] [--tmpfs] [--galley PATH]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pack_bench import ROOT, WORK, generate, image_kb, settle, timed, timed_with_cpu  # noqa: E402
import results  # noqa: E402

# Where --tmpfs works; removed however the run ends (a 30,000-article run holds 2 GB there).
SHM = os.path.join("/dev/shm", "galley-import-bench")


def bench_zip(galley, count):
    """The zip of the synthetic `count`-article issue (bench/pack_bench.py's source, packed by
    `galley` into bench/work/import-bench), packed again when its source is newer."""
    out = os.path.join(WORK, "import-bench")
    os.makedirs(out, exist_ok=True)
    source = generate(count, image_kb(count, None))
    zip_path = os.path.join(out, f"org.example.bench.{count}.zip")
    if not os.path.exists(zip_path) or os.path.getmtime(zip_path) < os.path.getmtime(os.path.join(source, ".complete")):
        packed = os.path.join(out, "packing")
        shutil.rmtree(packed, ignore_errors=True)
        timed([galley, "pack", source, "--output", packed])
        os.replace(os.path.join(packed, f"org.example.bench.{count}.zip"), zip_path)
        shutil.rmtree(packed, ignore_errors=True)
    return zip_path


def drop_page_cache(zip_path, binaries):
    """Drops the page cache (after `sync`, so only clean pages go: every run starts from the same
    state, with no earlier run's pages or dirty data), then reads the zip back, so every tool
    reads it from memory, and starts each tool once (`--version`), so none loads its start-up code and
    libraries from disk in the timed run; what else of its binary a run needs, each tool reads
    from disk alike (reading a whole binary back ahead of time made the kernel keep it in larger
    pieces and map more per fault: galley's peak RSS 3 MB higher). It does not undo ext4's
    `recently_deleted` (the module's note; `Trash` does). Needs root: returns why it could not,
    or None."""
    try:
        with open("/proc/sys/vm/drop_caches", "w") as control:
            control.write("3\n")
    except OSError as error:
        return error.strerror
    with open(zip_path, "rb") as zip_file:
        while zip_file.read(1 << 20):
            pass
    for binary, version in binaries:
        subprocess.run([binary, version], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return None


# Where each run's output waits to be deleted; removed however the run ends.
TRASH = os.path.join(WORK, "import-bench", "trash")
# How long a deleted inode slows the creation of files after it (ext4's RECENTCY_MIN is 60 s).
RECENTLY_DELETED_SECONDS = 61


class Trash:
    """Where each run's output goes instead of being deleted before the next run (see the module's
    note on `recently_deleted`); emptied once a size's runs are done."""

    def __init__(self, folder):
        self.folder = folder
        self.count = 0
        self.emptied = None  # when the trash was last emptied (time.monotonic())
        self.full = False  # no room: outputs are deleted between runs

    def plan_for(self, zip_path, runs):
        """Decides how this size's outputs go: kept in the trash when the disk holds every run's
        output (about four times the zip each: Galley's files, its kept zip and database, and
        the two extractions) with 2 GB to spare, deleted between runs otherwise (`full`).
        Returns whether they are kept."""
        need = os.path.getsize(zip_path) * 4 * (runs + 1) + (2 << 30)
        self.full = shutil.disk_usage(os.path.dirname(self.folder)).free < need
        return not self.full

    def discard(self, target):
        if not os.path.exists(target):
            return
        if self.full:
            shutil.rmtree(target, ignore_errors=True)
            return
        os.makedirs(self.folder, exist_ok=True)
        self.count += 1
        os.rename(target, os.path.join(self.folder, str(self.count)))

    def empty(self):
        if os.path.exists(self.folder):
            shutil.rmtree(self.folder, ignore_errors=True)
            os.sync()
            self.emptied = time.monotonic()

    def wait_out_deletions(self):
        """Waits until the last emptying is a minute old."""
        if self.emptied is not None:
            left = RECENTLY_DELETED_SECONDS - (time.monotonic() - self.emptied)
            if left > 0:
                time.sleep(left)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", default="300,3000,30000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--galley", default=os.path.join(ROOT, ".build", "release", "galley"))
    parser.add_argument("--tmpfs", action="store_true", help="extract in /dev/shm (a copy of the zip there too)")
    args = parser.parse_args()
    settle(args.galley)
    g = args.galley
    if not os.path.exists(g):
        sys.exit(f"no galley binary at {g}: run `make release` first")
    for tool in ("bsdtar", "unzip"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is missing: run `bash scripts/setup.sh --bench`")
    binaries = [(g, "--version"), (shutil.which("bsdtar"), "--version"), (shutil.which("unzip"), "-v")]
    cannot_drop = []  # why the page cache cannot be dropped, once found
    out = os.path.join(WORK, "import-bench")
    trash = Trash(TRASH)
    trash.empty()  # a run stopped earlier may have left one
    print(f"{'issue':>30} {'zip':>6} {'galley':>8} {'bsdtar':>8} {'unzip':>8} {'/bsdtar':>8} {'range':>11} {'/unzip':>7} "
          f"{'galley RSS':>10} {'bsdtar RSS':>10} {'CPU galley':>10} {'CPU bsdtar':>10}")
    ok = True
    rows = []
    for count in [int(c) for c in args.articles.split(",")]:
        zip_path = bench_zip(g, count)
        kb = image_kb(count, None)
        target = os.path.join(out, "target")
        if args.tmpfs:
            shutil.rmtree(SHM, ignore_errors=True)
            os.makedirs(SHM)
            shutil.copy(zip_path, SHM)
            zip_path, target = os.path.join(SHM, os.path.basename(zip_path)), os.path.join(SHM, "target")

        if not args.tmpfs and not trash.plan_for(zip_path, args.runs):
            print(f"note: no room to keep every run's output of {count} articles: each is deleted before the next run, "
                  "whose file creation then carries ext4's recently-deleted inode scan", file=sys.stderr)
        if not args.tmpfs:
            trash.discard(target)
            trash.wait_out_deletions()

        def fresh():
            if args.tmpfs:
                shutil.rmtree(target, ignore_errors=True)  # no inode allocator in tmpfs; no room in memory
            else:
                trash.discard(target)
            os.makedirs(target)
            os.sync()  # no run pays for another's write-back
            if not args.tmpfs and not cannot_drop:
                why = drop_page_cache(zip_path, binaries)
                if why:
                    cannot_drop.append(why)
                    print(f"note: cannot drop the page cache ({why}): each run starts with what the runs "
                          "before it left in memory, and varies with it", file=sys.stderr)

        commands = {
            "galley": [g, "import", zip_path, "--store", os.path.join(target, "store")],
            "bsdtar": ["bsdtar", "-xf", zip_path, "-C", target],
            "unzip": ["unzip", "-q", zip_path, "-d", target],
        }
        times = {name: [] for name in commands}
        cpus = {name: [] for name in commands}
        peaks = {name: 0.0 for name in commands}
        fresh()
        timed(commands["bsdtar"])  # warm the page cache: every tool reads the zip from memory
        for _ in range(args.runs):
            for name, cmd in commands.items():
                fresh()
                elapsed, peak, cpu = timed_with_cpu(cmd)
                times[name].append(elapsed)
                cpus[name].append(cpu)
                peaks[name] = max(peaks[name], peak)
        trash.discard(target)
        trash.empty()
        size = os.path.getsize(zip_path) / 1e6
        shutil.rmtree(SHM, ignore_errors=True)
        median = {name: statistics.median(values) for name, values in times.items()}
        ratios = sorted(a / b for a, b in zip(times["galley"], times["bsdtar"]))
        ratio = median["galley"] / median["bsdtar"]
        label = f"{count} articles, {kb} KiB images" + (", tmpfs" if args.tmpfs else "")
        print(f"{label:>30} {size:5.0f}M {median['galley']:7.2f}s {median['bsdtar']:7.2f}s {median['unzip']:7.2f}s "
              f"{ratio:8.2f} {ratios[0]:5.2f}-{ratios[-1]:<5.2f} {median['galley'] / median['unzip']:7.2f} "
              f"{peaks['galley']:9.1f}M {peaks['bsdtar']:9.1f}M "
              f"{statistics.median(cpus['galley']):9.2f}s {statistics.median(cpus['bsdtar']):9.2f}s", flush=True)
        met = ratio <= 1.5 and peaks["galley"] < 64
        ok = ok and met
        rows.append({"job": "galley import", "peer": "bsdtar -xf", "size": f"{count:,} articles ({size:.0f} MB)"
                     + (", tmpfs" if args.tmpfs else ""), "ratio": round(ratio, 2),
                     "range": [round(ratios[0], 2), round(ratios[-1], 2)], "peak_mb": round(peaks["galley"], 1),
                     "peer_peak_mb": round(peaks["bsdtar"], 1), "goal": "<= 1.5x, < 64 MB", "met": met, "better": "lower"})
    print("range: the lowest and highest ratio of runs taken side by side; CPU: user and system seconds of all")
    print("threads (medians), steadier than wall time when the machine's speed moves from hour to hour")
    print("goal (galley import <= 1.5x bsdtar -xf, RSS < 64 MB, at every size): " + ("met" if ok else "NOT met"))
    results.record("import", rows, "make release && python3 bench/import_bench.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(SHM, ignore_errors=True)  # also when a command failed or ^C
        shutil.rmtree(TRASH, ignore_errors=True)
