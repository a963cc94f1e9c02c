#!/usr/bin/env python3
"""Benchmark: `galley render` against Hugo on the same 3,000 articles.

Generates (once, under bench/work/) a synthetic issue of N Markdown articles with two images
each (small images, so the comparison is about pages, not file copying), and the same articles
as a Hugo site whose placeholders are Hugo's figure shortcode. Times `galley render SOURCE
--output DIR` (Markdown to HTML, placeholders to figures, complete pages, index) against
`hugo --quiet` building the site, and prints pages per second for both. Goal: faster than Hugo.

Disk write-back makes runs on disk vary a lot on a small machine; `--tmpfs` copies both trees
to /dev/shm and runs there, which measures the tools rather than the disk.

Usage: bench/render_bench.py [--articles 3000] [--runs 3] [--tmpfs] [--galley PATH]
"""
import argparse
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pack_bench import JPEG_HEAD, ROOT, WORK, measure, settle  # noqa: E402
import results  # noqa: E402

WORDS = ("harbour ferry night light keeper tide quay crane fog horn log book storm lamp gull captain deck "
         "ramp baker nurse fish crossing winter water dark month").split()


def generate(count):
    folder = os.path.join(WORK, f"render-{count}")
    marker = os.path.join(folder, ".complete")
    if os.path.exists(marker):
        return os.path.join(folder, "issue"), os.path.join(folder, "hugo")
    shutil.rmtree(folder, ignore_errors=True)
    issue = os.path.join(folder, "issue")
    hugo = os.path.join(folder, "hugo")
    os.makedirs(os.path.join(issue, "articles"))
    os.makedirs(os.path.join(hugo, "content", "articles"))
    os.makedirs(os.path.join(hugo, "static", "assets"))
    os.makedirs(os.path.join(hugo, "layouts", "_default"))
    with open(os.path.join(issue, "issue.yaml"), "w") as f:
        f.write(f"title: Render bench\napple_id: org.example.render.{count}\npublish_date: 2026-01-01\n")
    with open(os.path.join(hugo, "config.toml"), "w") as f:
        f.write('baseURL = "/"\ntitle = "Render bench"\ndisableKinds = ["taxonomy", "term", "RSS", "sitemap"]\n'
                '[markup.goldmark.renderer]\nunsafe = true\n')
    with open(os.path.join(hugo, "layouts", "_default", "single.html"), "w") as f:
        f.write('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}</title></head>\n'
                '<body><main><h1>{{ .Title }}</h1><p class="dek">{{ .Params.dek }}</p>{{ .Content }}</main></body></html>\n')
    with open(os.path.join(hugo, "layouts", "_default", "list.html"), "w") as f:
        f.write('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}</title></head>\n'
                '<body><ol>{{ range .Pages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>{{ end }}</ol></body></html>\n')
    rng = random.Random(count)
    image = JPEG_HEAD + bytes(1024)
    for i in range(count):
        paragraphs = [" ".join(rng.choice(WORDS) for _ in range(40)).capitalize() + "." for _ in range(12)]
        slug = f"{i + 1:05d}-article-{i + 1}"
        folder_i = os.path.join(issue, "articles", slug)
        os.makedirs(folder_i)
        def body(a, b):
            return ("\n\n".join(paragraphs[:4]) + f"\n\n{a}\n\n" + "\n\n".join(paragraphs[4:8]) + f"\n\n{b}\n\n"
                    + "\n\n".join(paragraphs[8:]) + "\n")
        with open(os.path.join(folder_i, "article.md"), "w") as f:
            f.write(f"---\ntitle: Article {i + 1}\ndek: A synthetic article\nassets:\n  - file: a.jpg\n    caption: First\n"
                    f"    alt: The first picture\n  - file: b.jpg\n    caption: Second\n---\n"
                    + body("<!-- [ASSET: a.jpg] -->", "<!-- [ASSET: b.jpg] -->"))
        for name in ("a.jpg", "b.jpg"):
            with open(os.path.join(folder_i, name), "wb") as f:
                f.write(image)
            with open(os.path.join(hugo, "static", "assets", f"{slug}-{name}"), "wb") as f:
                f.write(image)
        figure = '{{{{< figure src="/assets/{0}-{1}" alt="{2}" caption="{3}" >}}}}'
        with open(os.path.join(hugo, "content", "articles", f"{slug}.md"), "w") as f:
            f.write(f"---\ntitle: Article {i + 1}\ndek: A synthetic article\n---\n"
                    + body(figure.format(slug, "a.jpg", "The first picture", "First"),
                           figure.format(slug, "b.jpg", "Second", "Second")))
    open(marker, "w").close()
    return issue, hugo


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tmpfs", action="store_true", help="run in /dev/shm")
    parser.add_argument("--galley", default=os.path.join(ROOT, ".build", "release", "galley"))
    args = parser.parse_args()
    settle(args.galley)
    if not shutil.which("hugo"):
        sys.exit("no hugo on PATH: bash scripts/setup.sh --bench installs it")
    issue, hugo = generate(args.articles)
    out = os.path.join(WORK, "render-out")
    if args.tmpfs:
        shm = os.path.join("/dev/shm", "galley-render-bench")
        shutil.rmtree(shm, ignore_errors=True)
        shutil.copytree(os.path.dirname(issue), shm)
        issue, hugo, out = os.path.join(shm, "issue"), os.path.join(shm, "hugo"), os.path.join(shm, "out")

    def clean():
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(os.path.join(hugo, "public"), ignore_errors=True)
        shutil.rmtree(os.path.join(hugo, "resources"), ignore_errors=True)
        os.sync()  # no run pays for another's write-back

    g_time, g_rss = measure([args.galley, "render", issue, "--output", out], args.runs, clean)
    h_time, h_rss = measure(["hugo", "--quiet", "-s", hugo], args.runs, clean)
    clean()
    if args.tmpfs:
        shutil.rmtree(os.path.dirname(issue), ignore_errors=True)
    n = args.articles
    print(f"{'tool':>8} {'time':>8} {'pages/s':>9} {'peak RSS':>9}")
    print(f"{'galley':>8} {g_time:7.2f}s {n / g_time:9.0f} {g_rss:8.1f}M")
    print(f"{'hugo':>8} {h_time:7.2f}s {n / h_time:9.0f} {h_rss:8.1f}M")
    print("goal (galley faster than hugo): " + ("met" if g_time < h_time else "NOT met"))
    results.record("render" + ("-tmpfs" if args.tmpfs else ""), [{
        "job": "galley render (site)", "peer": "hugo", "size": f"{n:,} articles" + (", tmpfs" if args.tmpfs else ""),
        "ratio": round(g_time / h_time, 2), "range": None, "peak_mb": round(g_rss, 1), "peer_peak_mb": round(h_rss, 1),
        "goal": "faster than hugo", "met": g_time < h_time, "better": "lower"}],
        "make release && python3 bench/render_bench.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
