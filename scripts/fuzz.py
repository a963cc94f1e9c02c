#!/usr/bin/env python3
"""Mutation campaigns against a built galley: damaged zips, manifests, sources and requests.

Bad input is normal input: every damaged input must end in a report (exit 0 or 1, a JSON
document with --json), never a crash, a hang or another status, and the commands must agree
with each other. `make test` runs a small fixed set of such mutants (MutationTests); this
script runs as many as you like, with fresh seeds, to look for new ones:

  python3 scripts/fuzz.py zips     [--runs 1000]   validate, import and render each damaged
                                                   zip: all must report, and validate and
                                                   import refuse the same ones
  python3 scripts/fuzz.py manifests [--runs 300]   latest.json damaged (as JSON and as bytes),
                                                   rezipped with right CRCs: validate and
                                                   render (zip and bare file) and import must
                                                   report
  python3 scripts/fuzz.py sources  [--runs 200]    a copy of Examples/winter-2026 with damaged
                                                   text: pack and validate SOURCE agree, what
                                                   pack writes passes validate, nothing is left
                                                   beside the output
  python3 scripts/fuzz.py serve    [--runs 2000]   hostile requests to galley serve on a store
                                                   of the example: never a 5xx, never silence
                                                   for a whole request, never a dead server
  python3 scripts/fuzz.py large    [--runs 100]    a 3,000-article latest.json (its rows written
                                                   beside the pass) damaged near its end, imported
                                                   over its whole self: validate and import agree,
                                                   a refusal leaves the store's files as they were
  python3 scripts/fuzz.py sync     [--runs 150]    galley sync of damaged feeds and packages
                                                   from a local server (cut, changed, lying
                                                   about size or SHA-256, 5xx, redirect loops):
                                                   exit 0, 1 or 2 with a JSON summary, and the
                                                   store checks clean after every run

Options: --galley PATH (default .build/release/galley), --seed N (default: the time), --keep
DIR (where failing inputs are copied, default fuzz-failures/). Exit 0 when nothing failed, 1
when something did (each failure printed with the copy of its input), 2 when it cannot run.
Found so far: pack wrote bodies with <script> that validate then refused (2026-11-27).
"""
import argparse
import hashlib
import http.server
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "Examples", "winter-2026")
FIXTURES = os.path.join(ROOT, "Tests", "Fixtures", "zips")


class Campaign:
    def __init__(self, args):
        self.galley = os.path.abspath(args.galley)
        self.rng = random.Random(args.seed)
        self.keep = os.path.abspath(args.keep)
        self.work = tempfile.mkdtemp(prefix="galley-fuzz-")
        self.failures = 0
        self.counts = {}

    def run(self, arguments, timeout=30):
        """(status, stdout, stderr) of galley; status "timeout" when it hangs."""
        try:
            done = subprocess.run([self.galley] + arguments, capture_output=True, timeout=timeout)
            return done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired:
            return "timeout", b"", b""

    def reported(self, status, stdout):
        """Whether a run ended in a report: exit 0 or 1 and a JSON document."""
        if status not in (0, 1):
            return False
        try:
            json.loads(stdout)
            return True
        except ValueError:
            return False

    def fail(self, what, path, detail=b""):
        self.failures += 1
        os.makedirs(self.keep, exist_ok=True)
        target = os.path.join(self.keep, f"{self.failures:03d}-{os.path.basename(path.rstrip('/'))}")
        if os.path.isdir(path):
            shutil.copytree(path, target, dirs_exist_ok=True)
        elif os.path.exists(path):
            shutil.copy(path, target)
        text = detail.decode("utf-8", "replace")[-600:] if isinstance(detail, bytes) else str(detail)
        print(f"FAILED {what}: {target}\n  {text}", flush=True)

    def count(self, key):
        self.counts[key] = self.counts.get(key, 0) + 1

    def mutate_bytes(self, data):
        rng, d = self.rng, bytearray(data)
        for _ in range(rng.randint(1, 3)):
            if not d:
                break
            kind, i = rng.randrange(7), rng.randrange(len(d))
            tail = max(0, len(d) - 2000)  # the central directory and its end
            if kind == 0:
                d[i] = rng.randrange(256)
            elif kind == 1:
                del d[rng.randrange(len(d)):]
            elif kind == 2:
                d[i:i + rng.randint(1, 64)] = bytes([rng.choice([0, 0xFF])]) * rng.randint(1, 64)
            elif kind == 3:
                d[rng.randrange(tail, len(d))] = rng.randrange(256)
            elif kind == 4:
                j = rng.randrange(len(d))
                d[i:i] = d[j:j + rng.randint(1, 4096)]
            elif kind == 5 and len(d) > 4:
                k = rng.randrange(tail, len(d) - 4)
                d[k:k + 4] = rng.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"\xff\xff\x00\x00", b"\x00\x00\x00\x80"])
            else:
                del d[i:i + rng.randint(1, 50)]
        return bytes(d)

    def packed_example(self):
        out = os.path.join(self.work, "seed")
        status, _, err = self.run(["pack", EXAMPLE, "--output", out + "/", "--thumbnails", "none", "--quiet"], timeout=120)
        if status != 0:
            sys.exit(f"fuzz: could not pack the example: {err.decode(errors='replace')}")
        return os.path.join(out, "com.example.harbour.2026-01.zip")

    def damage_json(self, document, values, within=(), depth=None):
        """One change somewhere below `within` (a path of keys into `document`, not changed itself),
        at most `depth` levels down: a member deleted, an array item repeated, or a value
        replaced by one of `values`. Returns the document as JSON bytes."""
        paths = []

        def walk(value, path):
            paths.append(path)
            if depth is not None and len(path) - len(within) >= depth:
                return
            children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
            for key, child in children:
                walk(child, path + [key])
        start = document
        for key in within:
            start = start[key]
        walk(start, list(within))
        path = self.rng.choice(paths[1:])
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and self.rng.random() < 0.25:
            del parent[path[-1]]
        elif isinstance(parent, list) and self.rng.random() < 0.25:
            parent.append(parent[path[-1]])
        else:
            parent[path[-1]] = self.rng.choice(values)
        return json.dumps(document).encode()

    def damage_text(self, data, edits, position, alphabet, brackets):
        """`edits` changes to `data` at offsets `position(len)` gives: a byte from `alphabet`, up
        to 50 bytes cut, a run of other bytes of the text copied in, or up to `brackets` `[`."""
        damaged = bytearray(data)
        for _ in range(edits):
            i = position(len(damaged))
            kind = self.rng.randrange(4)
            if kind == 0:
                damaged[i] = self.rng.choice(alphabet)
            elif kind == 1:
                del damaged[i:i + self.rng.randint(1, 50)]
            elif kind == 2:
                damaged[i:i] = damaged[self.rng.randrange(len(damaged)):][:self.rng.randint(1, 200)]
            else:
                damaged[i:i] = b"[" * self.rng.randint(1, brackets)
        return bytes(damaged)

    # Campaigns

    def zips(self, runs):
        seeds = [self.packed_example()] + [os.path.join(FIXTURES, name) for name in
                                           ("example-valid.zip", "data-descriptor-valid.zip", "body-link-valid.zip", "svg-clean-valid.zip")]
        datas = [open(path, "rb").read() for path in seeds]
        for _ in range(runs):
            index = self.rng.randrange(len(datas))
            path = os.path.join(self.work, os.path.basename(seeds[index]))
            with open(path, "wb") as f:
                f.write(self.mutate_bytes(datas[index]))
            store = os.path.join(self.work, "store")
            shutil.rmtree(store, ignore_errors=True)
            validated = self.run(["validate", path, "--json"])
            imported = self.run(["import", path, "--store", store, "--json"])
            site = os.path.join(self.work, "site")
            rendered = self.run(["render", path, "--output", site, "--force", "--json"])
            self.count(("validate", validated[0]))
            if not self.reported(rendered[0], rendered[1]):
                self.fail(f"render exited {rendered[0]}", path, rendered[2])
            if not self.reported(validated[0], validated[1]):
                self.fail(f"validate exited {validated[0]}", path, validated[2])
            elif not self.reported(imported[0], imported[1]):
                self.fail(f"import exited {imported[0]}", path, imported[2])
            elif validated[0] != imported[0]:
                self.fail(f"validate exited {validated[0]} but import {imported[0]}", path, imported[1])
            elif imported[0] == 1 and os.path.exists(store):
                self.fail("a refused first import left a store behind", path)

    def manifests(self, runs):
        seed = zipfile.ZipFile(self.packed_example())
        names = seed.namelist()
        manifest_name = next(name for name in names if name.endswith("/latest.json"))
        manifest = seed.read(manifest_name)
        others = {name: seed.read(name) for name in names if name != manifest_name}
        values = [None, True, 0, -1, 2 ** 63, 1e308, "", "x" * 100000, [], {}, [[[[[]]]]], "../../etc/passwd", "\u0000",
                  "\u202e", "<script>alert(1)</script>", "2026-13-45T99:99:99Z", {"a": 1}]
        store = os.path.join(self.work, "store")
        for _ in range(runs):
            if self.rng.random() < 0.6:
                damaged = self.damage_json(json.loads(manifest), values)
            else:
                damaged = self.damage_text(manifest, self.rng.randint(1, 5), self.rng.randrange,
                                           b'{}[]",:\\0123456789eE+-. \x00\xff\xc3', 5000)
            path = os.path.join(self.work, "issue.zip")
            with zipfile.ZipFile(path, "w") as out:
                for name in names:
                    info = zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0))
                    out.writestr(info, damaged if name == manifest_name else others[name],
                                 compress_type=zipfile.ZIP_DEFLATED if name.endswith(".json") else zipfile.ZIP_STORED)
            bare = os.path.join(self.work, "latest.json")
            with open(bare, "wb") as f:
                f.write(damaged)
            site = os.path.join(self.work, "site")
            for arguments in (["validate", path, "--json"], ["validate", bare, "--json"],
                              ["import", path, "--store", store, "--force", "--json"],
                              ["render", path, "--output", site, "--force", "--json"],
                              ["render", bare, "--output", site, "--force", "--json"]):
                status, stdout, stderr = self.run(arguments)
                self.count((arguments[0], status))
                if not self.reported(status, stdout):
                    self.fail(f"{arguments[0]} exited {status}", bare, stderr)

    @staticmethod
    def snapshot(store):
        """The store's files by content, as the tests compare them: SQLite's shared-memory index
        left out, an empty write-ahead log as none."""
        files = {}
        for folder, _, names in os.walk(store):
            for name in names:
                path = os.path.join(folder, name)
                if name.endswith("-shm") or (name.endswith("-wal") and os.path.getsize(path) == 0):
                    continue
                with open(path, "rb") as f:
                    files[os.path.relpath(path, store)] = hashlib.file_digest(f, "sha256").hexdigest()
        return files

    @staticmethod
    def errors(report):
        """The ids of the errors in validate's --json report."""
        try:
            inputs = json.loads(report).get("inputs", [])
        except ValueError:
            return set()
        return {d.get("id") for i in inputs for d in i.get("diagnostics", []) if d.get("severity") == "error"}

    def large(self, runs):
        """An issue whose latest.json is large against its files (3,000 articles, about 10 MB:
        the import writes its rows beside the pass, `BesideRows`), damaged as JSON or as bytes and
        rezipped with right CRCs, imported with --force over its undamaged self: validate and
        import agree, a refused import leaves the store's files as they were, an accepted one
        checks clean (and the undamaged issue is put back)."""
        rng = random.Random(self.rng.random())
        words = "harbour ferry night light keeper tide quay crane fog horn log book storm lamp gull".split()
        jpeg = bytes.fromhex("ffd8ffe000104a46494600010100000100010000") + bytes(64) + b"\xff\xd9"
        articles = []
        for i in range(3000):
            body = "<p>" + " ".join(rng.choice(words) for _ in range(450)) + f"</p>\n<!-- [ASSET: p{i + 1}] -->\n"
            articles.append({
                "global_id": f"6c{i + 1:022x}", "title": f"Article {i + 1}", "body": body, "description": "", "url": "",
                "section": "", "author_name": "", "source": "", "dek": "", "author_url": "", "author_bio": "",
                "keywords": "a,b", "commentary": "", "type": "article",
                "date_last_updated": f"2020-02-{28 - i // 1440:02d}T{23 - (i // 60) % 24:02d}:{59 - i % 60:02d}:00.000+0000",
                "meta": {"published": True}, "customMeta": {}, "metadata": {},
                "images": {"ordered": [{"id": f"p{i + 1}", "caption": "", "source": "", "file_name": "photo.jpg",
                                        "crop_350_350": "photo.jpg"}]}})
        document = {"global_id": "5f00000000000000000000cc", "apple_id": "large", "title": "Large", "description": "",
                    "last_updated": "2020-03-01T00:00:00.000+0000", "display_date": "March 2020",
                    "publish_date": "03/01/2020", "metadata": {},
                    "images": {"ordered": [{"id": "cover", "caption": "", "source": "", "file_name": "cover.jpg",
                                            "crop_350_350": "cover.jpg"}]}, "articles": articles}
        manifest = json.dumps(document).encode()

        def write(path, text):
            with zipfile.ZipFile(path, "w") as out:
                out.writestr(zipfile.ZipInfo("large/latest.json", (2026, 1, 1, 0, 0, 0)), text, compress_type=zipfile.ZIP_DEFLATED)
                for name in ("cover.jpg", "photo.jpg"):
                    out.writestr(zipfile.ZipInfo(f"large/{name}", (2026, 1, 1, 0, 0, 0)), jpeg)
        whole = os.path.join(self.work, "whole", "large.zip")
        os.makedirs(os.path.dirname(whole))
        write(whole, manifest)
        store = os.path.join(self.work, "store")
        status, _, stderr = self.run(["import", whole, "--store", store, "--json"], timeout=120)
        if status != 0:
            sys.exit(f"fuzz: the undamaged large issue was not imported: {stderr.decode(errors='replace')}")
        before = self.snapshot(store)
        values = [None, True, 0, -1, "", "x" * 1000, [], {}, "\u0000", "2026-13-45T99:99:99Z", {"a": 1}]
        for _ in range(runs):
            if self.rng.random() < 0.5:
                # Somewhere in one article's object, most often one of the last (its rows are
                # written by then), or in the issue's own fields.
                index = min(2999, int(3000 * (1 - self.rng.random() ** 3)))
                within, depth = (["articles", index], None) if self.rng.random() < 0.9 else ([], 1)
                damaged = self.damage_json(json.loads(manifest), values, within, depth)
            else:
                damaged = self.damage_text(manifest, self.rng.randint(1, 3),
                                           lambda n: n - 1 - int(n * self.rng.random() ** 3), b'{}[]",:\\0123456789 \x00\xff', 500)
            path = os.path.join(self.work, "large.zip")
            write(path, damaged)
            validated = self.run(["validate", path, "--json"], timeout=120)
            imported = self.run(["import", path, "--store", store, "--force", "--json"], timeout=120)
            self.count(("import", imported[0]))
            # Import takes an older Linechef format that validate refuses (a warning for it).
            older = validated[0] == 1 and self.errors(validated[1]) == {"manifest.older-format"}
            if not self.reported(validated[0], validated[1]):
                self.fail(f"validate exited {validated[0]}", path, validated[2])
            elif not self.reported(imported[0], imported[1]):
                self.fail(f"import exited {imported[0]}", path, imported[2])
            elif validated[0] != imported[0] and not (older and imported[0] == 0):
                self.fail(f"validate exited {validated[0]} but import {imported[0]}", path, imported[1])
            if imported[0] == 1 and self.snapshot(store) != before:
                after = self.snapshot(store)
                changed = sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))
                self.fail(f"a refused import changed the store's files ({', '.join(changed)})", path, imported[1])
            elif imported[0] == 0:
                status, stdout, _ = self.run(["store", "check", "--store", store, "--json"], timeout=120)
                if status != 0:
                    self.fail("the store does not check clean after an import", path, stdout)
                self.run(["import", whole, "--store", store, "--force", "--json"], timeout=120)
                before = self.snapshot(store)

    def sources(self, runs):
        texts = []
        for folder, _, files in os.walk(EXAMPLE):
            texts += [os.path.relpath(os.path.join(folder, f), EXAMPLE) for f in files if f.endswith((".md", ".yaml", ".html", ".json"))]
        snippets = [b"\n---\n", b": ", b"- ", b"{", b"[", b'"', b"'", b"&a", b"*a", b"!!binary ", b"\t", b"\x00", b"\xff\xfe",
                    b"<!-- [ASSET: ", b" -->", b'<img src="../../../etc/passwd">', b'<a href="/abs">', b"date: 2026-02-30",
                    b"id: x\nid: y\n", b"\xe2\x80\xae", b"%YAML 1.1\n", b"<<: *a\n", b"a: &a [*a]\n", b"~", b"9" * 40, b"\r\n",
                    b"<script>", b"<![CDATA[", b"]]>", b"<p><b>", b'<img src="https://e.com/a.png">',
                    # Paths that come back to the issue folder itself.
                    b'<img src="../..">', b"![x](.)", b'<a href="a/../../">', b"\n  - file: ../..\n"]
        for _ in range(runs):
            source = os.path.join(self.work, "source")
            out = os.path.join(self.work, "out")
            shutil.rmtree(source, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(EXAMPLE, source)
            for _ in range(self.rng.randint(1, 3)):
                path = os.path.join(source, self.rng.choice(texts))
                data = bytearray(open(path, "rb").read())
                i = self.rng.randrange(len(data) + 1)
                kind = self.rng.randrange(3)
                if kind == 0:
                    del data[i:i + self.rng.randint(1, 40)]
                else:
                    data[i:i] = self.rng.choice(snippets) * (1 if kind == 1 else self.rng.randint(1, 3000))
                with open(path, "wb") as f:
                    f.write(data)
            validated = self.run(["validate", source, "--json"])
            packed = self.run(["pack", source, "--output", out + "/", "--thumbnails", "none", "--json"])
            rendered = self.run(["render", source, "--output", os.path.join(out, "site"), "--json"])
            self.count(("pack", packed[0]))
            for name, (status, stdout, stderr) in (("validate", validated), ("pack", packed), ("render", rendered)):
                if not self.reported(status, stdout):
                    self.fail(f"{name} exited {status}", source, stderr)
            if validated[0] != packed[0]:
                self.fail(f"validate SOURCE exited {validated[0]} but pack {packed[0]}", source, validated[1])
            if packed[0] == 0:
                for name in os.listdir(out):
                    if name.endswith(".zip"):
                        status, stdout, _ = self.run(["validate", os.path.join(out, name), "--json"])
                        if status != 0:
                            self.fail("validate refuses what pack wrote", source, stdout)
            left = set(os.listdir(self.work)) - {"source", "out", "seed"}
            if left:
                self.fail(f"left beside the output: {sorted(left)}", source)
                for name in left:
                    shutil.rmtree(os.path.join(self.work, name), ignore_errors=True)

    def serve(self, runs):
        store = os.path.join(self.work, "store")
        status, _, err = self.run(["import", self.packed_example(), "--store", store, "--quiet"])
        if status != 0:
            sys.exit(f"fuzz: could not import the example: {err.decode(errors='replace')}")
        log = open(os.path.join(self.work, "serve.log"), "w")
        server = subprocess.Popen([self.galley, "serve", "--store", store, "--port", "0"], stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            port = int(re.search(r":(\d+)", server.stdout.readline()).group(1))
            issue = "com.example.harbour.2026-01"
            paths = ["/v1/issues", f"/v1/issues/{issue}", f"/v1/issues/{issue}/articles", "/v1/assets", "/v1/search", "/feed",
                     "/openapi.yaml", "/metrics", f"/v1/issues/{issue}/files/latest.json", f"/v1/issues/{issue}/download", "/"]
            listing = self.request(port, f"GET /v1/issues/{issue}/articles?limit=100 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 10)
            for article in re.findall(rb'"global_id" ?: ?"([0-9a-f]{24})"', listing)[:3]:
                paths += [f"/v1/articles/{article.decode()}", f"/v1/articles/{article.decode()}/page"]
            names = ["limit", "cursor", "page", "type", "exclude_type", "featured", "keyword", "order", "issue", "article", "kind",
                     "playlist", "cover", "first", "count", "q"]
            values = ["", "0", "-1", "101", "9" * 20, "date", "true", "x" * 5000, "%00", "%ff%fe", "..%2f..%2fetc%2fpasswd", '"', "'",
                      "*", "NOT", "a OR b", "%", "%%", "\u00e9", "eyJ4IjoxfQ", "AAAA"]
            methods = ["GET", "GET", "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "G\x00T", "CONNECT"]
            headers = ["Accept-Encoding: gzip", "Range: bytes=0-10", "Range: bytes=-5", "Range: bytes=99999999999-", "Range: bytes=5-1",
                       'If-None-Match: "x"', "If-None-Match: *", "If-Modified-Since: garbage", "Authorization: Bearer x",
                       "Accept: text/html", "Origin: https://e.com", "X: " + "y" * 20000]
            for _ in range(runs):
                path = self.rng.choice(paths)
                if self.rng.random() < 0.3:
                    path += self.rng.choice(["/", "//", "/..", "/%2e%2e", "/x", "%20", "\\", "/" + "a" * self.rng.choice([10, 3000, 20000])])
                query = "&".join(f"{self.rng.choice(names)}={self.rng.choice(values)}" for _ in range(self.rng.randint(0, 4)))
                extra = [self.rng.choice(headers)] if self.rng.random() < 0.3 else []
                text = (f"{self.rng.choice(methods)} {path}{'?' + query if query else ''} HTTP/1.1\r\n"
                        + "".join(h + "\r\n" for h in ["Host: x"] + extra) + "Connection: close\r\n\r\n")
                answer = self.request(port, text, 15)
                match = re.match(rb"HTTP/1.1 (\d+)", answer or b"")
                code = int(match.group(1)) if match else ("timeout" if answer is None else "no status line" if answer else "closed")
                self.count(("serve", code))
                if server.poll() is not None:
                    self.fail(f"the server died (exit {server.returncode}) on a request", "/dev/null", text[:300].encode())
                    break
                if code == "timeout" or code == "no status line" or (isinstance(code, int) and code >= 500):
                    request = os.path.join(self.work, "request.txt")
                    with open(request, "w", errors="surrogateescape") as f:
                        f.write(text)
                    self.fail(f"serve answered {code}", request, answer or b"")
        finally:
            server.terminate()
            server.wait(timeout=10)

    def sync(self, runs):
        package = open(self.packed_example(), "rb").read()
        digest = hashlib.sha256(package).hexdigest()
        campaign = self
        state = {"feed": b"{}"}

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, body, headers=()):
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def do_GET(self):
                path = self.path.split("?")[0]
                if path == "/feed":
                    self.answer(200, state["feed"], [("Content-Type", "application/json")])
                elif path == "/pkg.zip":
                    self.answer(200, package)
                elif path == "/cut.zip":
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(package)))
                    self.end_headers()
                    self.wfile.write(package[:len(package) // 3])
                    self.close_connection = True
                elif path == "/changed.zip":
                    self.answer(200, campaign.mutate_bytes(package))
                elif path == "/error.zip":
                    self.answer(503, b"busy", [("Retry-After", "0")])
                elif path == "/loop.zip":
                    self.answer(302, b"", [("Location", "/loop.zip")])
                elif path == "/html.zip":
                    self.answer(200, b"<html>not a zip</html>", [("Content-Type", "text/html")])
                else:
                    self.answer(404, b"no")

            do_HEAD = do_GET

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        store = os.path.join(self.work, "store")
        files = ["/pkg.zip", "/cut.zip", "/changed.zip", "/error.zip", "/loop.zip", "/html.zip", "/missing.zip"]
        values = [None, True, -1, 0, 2 ** 63, 1e308, "", "x" * 10000, [], {}, "../../etc/passwd", "\u0000", "not-a-sha", digest.upper()]
        revision = 1
        try:
            for _ in range(runs):
                revision += self.rng.choice([0, 1, 1, 1, -1])
                entry = {"apple_id": "com.example.harbour.2026-01", "file_path": base + self.rng.choice(files),
                         "global_id": "4224009caba66f171d26ec50", "last_updated": "2026-01-04T18:30:00.000Z",
                         "sha256": digest, "size": len(package), "version": revision}
                feed = {"packages": [entry], "revision": revision, "schema_version": 1}
                for _ in range(self.rng.randint(0, 2)):
                    key = self.rng.choice(list(entry.keys()) + ["revision", "packages", "schema_version"])
                    target = feed if key in feed else entry
                    if self.rng.random() < 0.3:
                        target.pop(key, None)
                    else:
                        target[key] = self.rng.choice(values)
                text = json.dumps(feed).encode()
                if self.rng.random() < 0.15:
                    text = self.mutate_bytes(text)
                state["feed"] = text
                if self.rng.random() < 0.15:  # now and then a first sync, into a store not made yet
                    store = os.path.join(self.work, f"store-{self.rng.randrange(1 << 30)}")
                arguments = ["sync", base + "/feed", "--store", store, "--json", "--retries", "1", "--timeout", "5"]
                if self.rng.random() < 0.2:
                    arguments.append("--prune")
                existed = os.path.exists(store)
                status, stdout, stderr = self.run(arguments, timeout=60)
                self.count(("sync", status))
                feed_file = os.path.join(self.work, "feed.json")
                with open(feed_file, "wb") as f:
                    f.write(text)
                if status not in (0, 1, 2):
                    self.fail(f"sync exited {status}", feed_file, stderr)
                    continue
                if status == 2 and not existed and os.path.exists(store):
                    # The feed could not be read: a first sync makes no store then.
                    self.fail("a first sync whose feed could not be read made a store", feed_file, stdout + stderr)
                try:
                    json.loads(stdout)
                except ValueError:
                    self.fail("sync --json printed no JSON document", feed_file, stdout + stderr)
                if os.path.exists(os.path.join(store, "store.sqlite")):
                    status, stdout, _ = self.run(["store", "check", "--store", store, "--json"])
                    if status != 0:
                        self.fail("the store does not check clean after a sync", feed_file, stdout)
        finally:
            server.shutdown()

    @staticmethod
    def request(port, text, timeout):
        """The whole answer to a request, b"" when closed unanswered, None on timeout."""
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
                connection.sendall(text.encode("utf-8", "surrogateescape"))
                answer = b""
                while True:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return answer
                    answer += chunk
        except socket.timeout:
            return None
        except ConnectionResetError:
            return b""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("campaign", choices=["zips", "manifests", "sources", "serve", "sync", "large"])
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--galley", default=os.path.join(ROOT, ".build", "release", "galley"))
    parser.add_argument("--keep", default="fuzz-failures")
    args = parser.parse_args()
    if not os.access(args.galley, os.X_OK):
        sys.exit(f"fuzz: no galley at {args.galley} (make release)")
    args.seed = args.seed if args.seed is not None else int(time.time())
    campaign = Campaign(args)
    runs = args.runs or {"zips": 1000, "manifests": 300, "sources": 200, "serve": 2000, "sync": 150, "large": 100}[args.campaign]
    print(f"fuzz {args.campaign}: {runs} runs, seed {args.seed}", flush=True)
    try:
        getattr(campaign, args.campaign)(runs)
    finally:
        shutil.rmtree(campaign.work, ignore_errors=True)
    outcomes = ", ".join(f"{what} {status}: {n}" for (what, status), n in sorted(campaign.counts.items(), key=str))
    print(f"fuzz {args.campaign}: {campaign.failures} failed ({outcomes})")
    sys.exit(1 if campaign.failures else 0)


if __name__ == "__main__":
    main()
