#!/usr/bin/env python3
"""Independent check of an issue zip against docs/dumpling-wire-format (the producer profile).

Written with Python's zipfile and json only, so it shares no code with Galley. Prints one
problem per line and exits 1 when there is any; prints nothing and exits 0 otherwise.
Usage: check_issue_zip.py ZIP
"""
import json
import re
import sys
import zipfile

MEDIA_STORED = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".mp3", ".m4a", ".aac", ".mp4", ".mov")
ISSUE_STRINGS = ["global_id", "apple_id", "title", "description", "last_updated", "display_date", "publish_date"]
ARTICLE_STRINGS = ["global_id", "title", "body", "description", "url", "section", "author_name", "source", "dek",
                   "author_url", "author_bio", "keywords", "commentary", "type", "date_last_updated"]
ASSET_STRINGS = ["id", "caption", "source", "file_name", "crop_350_350"]
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}$")
PUBLISH = re.compile(r"^\d\d/\d\d/\d{4}$")
SAFE_NAME = re.compile(r"^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$")
PLACEHOLDER = re.compile(r"<!-- \[ASSET: (.+?)\] -->")

problems = []


def problem(text):
    problems.append(text)


def check_strings(obj, keys, where):
    for key in keys:
        if key not in obj:
            problem(f"{where}: missing key {key}")
        elif not isinstance(obj[key], str):
            problem(f"{where}: {key} is {type(obj[key]).__name__}, not a string")


def check_metadata_like(obj, key, where, mandatory):
    if key not in obj:
        if mandatory:
            problem(f"{where}: missing key {key}")
        return
    if not isinstance(obj[key], (dict, str)):
        problem(f"{where}: {key} must be an object or a string")


def check_asset(asset, where, names, top, ids):
    if not isinstance(asset, dict):
        problem(f"{where}: asset is not an object")
        return
    check_strings(asset, ASSET_STRINGS, where)
    check_metadata_like(asset, "metadata", where, False)
    for key in ("file_name", "crop_350_350"):
        value = asset.get(key)
        if isinstance(value, str):
            if not value:
                problem(f"{where}: {key} is empty")
            elif f"{top}/{value}" not in names:
                problem(f"{where}: {key} {value!r} is not in the zip")
    if "cover" in asset or "crop" in asset:
        problem(f"{where}: cover/crop variants emitted")
    ids.append(asset.get("id"))


def ordered(container, key, where, mandatory):
    if key not in container:
        if mandatory:
            problem(f"{where}: missing {key}")
        return []
    value = container[key]
    if not isinstance(value, dict):
        problem(f"{where}: {key} must be an object")
        return []
    if not isinstance(value.get("ordered"), list):
        problem(f"{where}: {key}.ordered must be a list")
        return []
    return value["ordered"]


def main(path):
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
        if bad is not None:
            problem(f"CRC error in {bad}")
        infos = z.infolist()
        names = set()
        tops = set()
        for info in infos:
            name = info.filename
            names.add(name)
            tops.add(name.split("/")[0])
            if not SAFE_NAME.match(name.rstrip("/")):
                problem(f"entry name outside the producer profile: {name!r}")
            if info.flag_bits & 1:
                problem(f"{name}: encrypted")
            if info.compress_type not in (0, 8):
                problem(f"{name}: method {info.compress_type}")
            if info.extract_version >= 45 or b"\x01\x00" == info.extra[:2]:
                problem(f"{name}: zip64")
            lower = name.lower()
            if lower.endswith(MEDIA_STORED) and info.compress_type != 0:
                problem(f"{name}: compressed media should be stored")
            if lower.endswith(".json") and info.compress_type != 8:
                problem(f"{name}: text should be deflated")
        if len(tops) != 1:
            problem(f"expected one top folder, found {sorted(tops)}")
            return
        top = tops.pop()
        if infos[0].filename != f"{top}/latest.json":
            problem(f"first entry is {infos[0].filename}, not latest.json")
        stem = path.rsplit("/", 1)[-1]
        if stem.endswith(".zip") and stem[:-4] != top:
            problem(f"zip name {stem} does not match the folder {top}")
        doc = json.loads(z.read(f"{top}/latest.json").decode("utf-8"))

    if not isinstance(doc, dict):
        problem("latest.json is not an object")
        return
    check_strings(doc, ISSUE_STRINGS, "issue")
    if doc.get("apple_id") != top:
        problem(f"apple_id {doc.get('apple_id')!r} does not match the folder {top!r}")
    if isinstance(doc.get("publish_date"), str) and not PUBLISH.match(doc["publish_date"]):
        problem(f"publish_date {doc['publish_date']!r} is not MM/dd/yyyy")
    check_metadata_like(doc, "metadata", "issue", False)
    ids = [doc.get("global_id")]
    for i, asset in enumerate(ordered(doc, "images", "issue", True)):
        check_asset(asset, f"issue.images[{i}]", names, top, ids)
    articles = doc.get("articles")
    if not isinstance(articles, list):
        problem("articles must be a list")
        return
    previous = None
    for i, article in enumerate(articles):
        where = f"articles[{i}]"
        if not isinstance(article, dict):
            problem(f"{where}: not an object")
            continue
        check_strings(article, ARTICLE_STRINGS, where)
        ids.append(article.get("global_id"))
        date = article.get("date_last_updated")
        if isinstance(date, str) and date and not ISO.match(date):
            problem(f"{where}: date_last_updated {date!r} is not yyyy-MM-ddTHH:mm:ss.SSS+zzzz")
        if isinstance(date, str) and previous is not None and date >= previous:
            problem(f"{where}: dates do not decrease along articles[]")
        previous = date
        if not isinstance(article.get("meta"), dict):
            problem(f"{where}: meta must be an object")
        check_metadata_like(article, "customMeta", where, True)
        check_metadata_like(article, "metadata", where, True)
        if "featured" in article:
            featured = article["featured"]
            if not isinstance(featured, dict) or doc.get("global_id") not in featured:
                problem(f"{where}: featured is not keyed by the issue's global_id")
        local = []
        for key in ("images", "sound_files", "videos"):
            for j, asset in enumerate(ordered(article, key, where, False)):
                check_asset(asset, f"{where}.{key}[{j}]", names, top, ids)
                local.append(asset.get("id"))
        body = article.get("body", "")
        if isinstance(body, str):
            if "\r" in body:
                problem(f"{where}: body has CR line endings")
            for line in body.split("\n"):
                found = PLACEHOLDER.findall(line)
                if found and line.strip() != f"<!-- [ASSET: {found[0]}] -->":
                    problem(f"{where}: placeholder not alone on its line: {line!r}")
                for asset_id in found:
                    if asset_id not in local:
                        problem(f"{where}: placeholder {asset_id} names no asset of the article")
            if re.search(r"<!--\s*\[\s*asset", body, re.I) and len(re.findall(r"<!--\s*\[\s*asset", body, re.I)) != len(PLACEHOLDER.findall(body)):
                problem(f"{where}: misspelled placeholder")
    seen = set()
    for value in ids:
        if not isinstance(value, str) or not value:
            continue
        if value in seen:
            problem(f"duplicate id {value}")
        seen.add(value)
        if re.search(r"['%\\\s\"]", value):
            problem(f"unsafe id {value!r}")


if __name__ == "__main__":
    main(sys.argv[1])
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)
