#!/usr/bin/env python3
"""Grows a Galley store to many issues by copying one imported issue's rows.

Importing 10,000 issue zips of 300 articles would take this machine most of a day; the
capacity bench and the store's plan tests need the rows, not the work of making them. So one
real issue is imported with `galley import`, and this script adds COPIES copies of its rows
(issue, articles, assets, files) in one transaction: each copy `k` gets its own apple_id
(`TEMPLATE.cK`), global ids (`…-cK`), title, and dates moved k days back, so the listings'
orders and the date filters see as many distinct keys as a real archive would. The copies
share the template's files (its folder or blobs, and its package zip): delete only issues that
were really imported.

The SQLite store's search index is made by SQL functions Galley registers on its own
connections, so the script leaves it stale on purpose (`PRAGMA user_version = 0`): the next
command that opens the store for writing rebuilds it (`galley store gc` does nothing else).
PostgreSQL's search column is copied as it is.

Usage: bench/grow_store.py STORE --from APPLE_ID --copies N
  STORE: a folder (SQLite store) or a postgres:// address (as `--store` takes it)
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import urllib.parse

DAY_MS = 86_400_000


def grow_sqlite(folder, template, copies):
    db = sqlite3.connect(os.path.join(folder, "store.sqlite"), timeout=60)
    try:
        db.execute("BEGIN IMMEDIATE")
        if db.execute("SELECT count(*) FROM issue WHERE appleID = ?", (template,)).fetchone()[0] != 1:
            raise SystemExit(f"grow_store: no issue `{template}` in {folder}")
        db.execute("CREATE TEMP TABLE n (k INTEGER PRIMARY KEY)")
        db.execute("WITH RECURSIVE r(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM r WHERE k < ?) "
                   "INSERT INTO n (k) SELECT k FROM r", (copies,))
        # The copies' issue rows, then everything that names one through its apple_id.
        db.execute("""
            INSERT INTO issue (globalID, appleID, title, description, lastUpdated, lastUpdatedMS, displayDate,
                publishDate, publishDay, metadata, folder, contentDigest, packageSHA256, packageSize, packageVersion,
                packageWithheld, articleCount)
            SELECT t.globalID || '-c' || n.k, t.appleID || '.c' || n.k, t.title || ' (' || n.k || ')', t.description,
                t.lastUpdated, t.lastUpdatedMS - n.k * ?, t.displayDate, t.publishDate,
                date(t.publishDay, '-' || n.k || ' days'), t.metadata, t.folder, t.contentDigest, t.packageSHA256,
                t.packageSize, t.packageVersion, t.packageWithheld, t.articleCount
            FROM issue t, n WHERE t.appleID = ?""", (DAY_MS, template))
        copy = "FROM issue t JOIN n JOIN issue c ON c.appleID = t.appleID || '.c' || n.k"
        db.execute(f"""
            INSERT INTO article (issueId, globalID, placement, title, body, description, url, section, authorName,
                source, dek, authorURL, authorBio, keywords, commentary, type, dateLastUpdated, dateMS, sku, published,
                featured, customMeta)
            SELECT c.id, a.globalID || '-c' || n.k, a.placement, a.title, a.body, a.description, a.url, a.section,
                a.authorName, a.source, a.dek, a.authorURL, a.authorBio, a.keywords, a.commentary, a.type,
                a.dateLastUpdated, a.dateMS - n.k * ?, a.sku, a.published, a.featured, a.customMeta
            {copy} JOIN article a ON a.issueId = t.id WHERE t.appleID = ?""", (DAY_MS, template))
        db.execute(f"""
            INSERT INTO asset (issueId, articleId, globalID, kind, placement, caption, source, fileName, crop350, metadata)
            SELECT c.id, na.id, s.globalID, s.kind, s.placement, s.caption, s.source, s.fileName, s.crop350, s.metadata
            {copy} JOIN asset s ON s.issueId = t.id
            LEFT JOIN article ta ON ta.id = s.articleId
            LEFT JOIN article na ON na.issueId = c.id AND na.globalID = ta.globalID || '-c' || n.k
            WHERE t.appleID = ?""", (template,))
        db.execute(f"""
            INSERT INTO file (issueId, name, size, sha256) SELECT c.id, f.name, f.size, f.sha256
            {copy} JOIN file f ON f.issueId = t.id WHERE t.appleID = ?""", (template,))
        db.execute("PRAGMA user_version = 0")
        db.commit()
    finally:
        db.close()


def grow_postgres(address, template, copies):
    parts = urllib.parse.urlsplit(address)
    database = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    copy = "FROM issue t CROSS JOIN generate_series(1, :copies) AS n(k) JOIN issue c ON c.apple_id = t.apple_id || '.c' || n.k"
    script = f"""
\\set ON_ERROR_STOP on
BEGIN;
SELECT pg_advisory_xact_lock({0x6761_6C6C_6579_0002});
SELECT count(*) = 1 AS found FROM issue WHERE apple_id = :'template' \\gset
\\if :found
\\else
  \\echo grow_store: no issue :'template'
  \\quit
\\endif
INSERT INTO issue (global_id, apple_id, title, description, last_updated, last_updated_ms, display_date,
    publish_date, publish_day, metadata, content_digest, package_sha256, package_size, package_version,
    package_withheld, article_count)
SELECT t.global_id || '-c' || n.k, t.apple_id || '.c' || n.k, t.title || ' (' || n.k || ')', t.description,
    t.last_updated, t.last_updated_ms - n.k::bigint * {DAY_MS}, t.display_date, t.publish_date,
    to_char(t.publish_day::date - n.k, 'YYYY-MM-DD'), t.metadata, t.content_digest, t.package_sha256,
    t.package_size, t.package_version, t.package_withheld, t.article_count
FROM issue t CROSS JOIN generate_series(1, :copies) AS n(k) WHERE t.apple_id = :'template';
INSERT INTO article (issue_id, global_id, placement, title, body, description, url, section, author_name, source,
    dek, author_url, author_bio, keywords, commentary, type, date_last_updated, date_ms, sku, published, featured,
    custom_meta, search_body, search)
SELECT c.id, a.global_id || '-c' || n.k, a.placement, a.title, a.body, a.description, a.url, a.section,
    a.author_name, a.source, a.dek, a.author_url, a.author_bio, a.keywords, a.commentary, a.type,
    a.date_last_updated, a.date_ms - n.k::bigint * {DAY_MS}, a.sku, a.published, a.featured, a.custom_meta,
    a.search_body, a.search
{copy} JOIN article a ON a.issue_id = t.id WHERE t.apple_id = :'template';
INSERT INTO asset (issue_id, article_id, global_id, kind, placement, caption, source, file_name, crop350, metadata)
SELECT c.id, na.id, s.global_id, s.kind, s.placement, s.caption, s.source, s.file_name, s.crop350, s.metadata
{copy} JOIN asset s ON s.issue_id = t.id
LEFT JOIN article ta ON ta.id = s.article_id
LEFT JOIN article na ON na.issue_id = c.id AND na.global_id = ta.global_id || '-c' || n.k
WHERE t.apple_id = :'template';
INSERT INTO file (issue_id, name, size, sha256) SELECT c.id, f.name, f.size, f.sha256
{copy} JOIN file f ON f.issue_id = t.id WHERE t.apple_id = :'template';
COMMIT;
"""
    result = subprocess.run(["psql", "-X", "-q", "-v", f"copies={int(copies)}", "-v", f"template={template}", database],
                            input=script, text=True, capture_output=True)
    if result.returncode != 0 or "grow_store:" in result.stdout:
        raise SystemExit(f"grow_store: {result.stdout.strip()} {result.stderr.strip()}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("store")
    parser.add_argument("--from", dest="template", required=True, help="the apple_id of an imported issue")
    parser.add_argument("--copies", type=int, required=True)
    args = parser.parse_args()
    if args.copies < 1:
        raise SystemExit("grow_store: --copies must be at least 1")
    if args.store.startswith(("postgres://", "postgresql://")):
        grow_postgres(args.store, args.template, args.copies)
    else:
        grow_sqlite(args.store, args.template, args.copies)


if __name__ == "__main__":
    sys.exit(main())
