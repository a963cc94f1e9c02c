#!/usr/bin/env bash
# Packs an issue over 4 GiB with --allow-zip64 and checks the zip with three other readers.
#
# The test suite covers Zip64 with small limits standing in for 65,535 entries and 4 GiB (the
# records are the same); this script runs the real thing, which needs about 10 GB of free disk
# and a minute or two, so it is not part of `make test`. Run it after changing ZipWriter:
#
#   bash scripts/zip64-check.sh [path/to/galley]      (default: .build/release/galley)
#
# The source is one article with a 4.3 GiB video (sparse: an MP4 head, then zeros). Checked:
# without --allow-zip64 pack refuses with pack.zip64-required (exit 1) and leaves nothing;
# with it the zip passes `unzip -t`, bsdtar lists the video's full size, Python's zipfile
# finds every CRC right, `galley validate` refuses it as Dumpling would (zip.zip64, exit 1),
# and a second pack gives the same bytes. Exit 0 when all hold; the work folder is removed.
set -euo pipefail

galley=${1:-.build/release/galley}
[ -x "$galley" ] || { echo "zip64-check: no galley at $galley (build with: make release)" >&2; exit 2; }
for tool in unzip bsdtar python3 cmp; do
    command -v "$tool" >/dev/null || { echo "zip64-check: $tool is missing (bash scripts/setup.sh --bench)" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/galley-zip64.XXXXXX")
trap 'rm -rf "$work"' EXIT
free_kb=$(df -Pk "$work" | awk 'NR == 2 { print $4 }')
[ "$free_kb" -gt $((10 * 1024 * 1024)) ] || { echo "zip64-check: needs 10 GB free in $work" >&2; exit 2; }

source="$work/source"
mkdir -p "$source/articles/01-film"
printf 'title: Big\napple_id: org.example.big\npublish_date: 2026-01-01\n' > "$source/issue.yaml"
printf -- '---\ntitle: Film\nassets:\n  - file: film.mp4\n---\n<!-- [ASSET: film.mp4] -->\n' > "$source/articles/01-film/article.md"
python3 - "$source/articles/01-film/film.mp4" <<'EOF'
import sys
with open(sys.argv[1], "wb") as f:
    f.write(bytes.fromhex("0000001866747970") + b"mp42" + bytes(4) + b"mp42isom")
    f.seek(4 * 1024**3 + 300 * 1024**2 - 1)
    f.write(b"\x01")
EOF
size=$(stat -c %s "$source/articles/01-film/film.mp4")

fail() { echo "zip64-check: FAILED: $*" >&2; exit 1; }

set +e
"$galley" pack "$source" --output "$work/refused/" --thumbnails none --quiet 2> "$work/refused.err"
status=$?
set -e
[ "$status" -eq 1 ] || fail "pack without --allow-zip64 exited $status, not 1"
grep -q "pack.zip64-required" "$work/refused.err" || fail "pack without --allow-zip64 did not say pack.zip64-required"
[ ! -e "$work/refused" ] || fail "the refused pack left $work/refused"
echo "refused without --allow-zip64: pack.zip64-required"

zip="$work/a/org.example.big.zip"
"$galley" pack "$source" --output "$work/a/" --allow-zip64 --thumbnails none --quiet
unzip -tq "$zip" > /dev/null || fail "unzip -t"
echo "unzip -t: no errors"
listed=$(bsdtar -tvf "$zip" | awk '/film-film.mp4$/ { print $5 }')
[ "$listed" = "$size" ] || fail "bsdtar lists the video as $listed bytes, not $size"
echo "bsdtar: the video is $listed bytes"
python3 - "$zip" "$size" <<'EOF' || fail "Python's zipfile"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    assert z.testzip() is None, "a CRC is wrong"
    sizes = {i.filename: i.file_size for i in z.infolist()}
    assert sizes["org.example.big/film-film.mp4"] == int(sys.argv[2]), sizes
print("Python zipfile: every CRC right")
EOF
set +e
"$galley" validate "$zip" > "$work/validate.out" 2>&1
status=$?
set -e
[ "$status" -eq 1 ] && grep -q "zip.zip64" "$work/validate.out" || fail "galley validate did not refuse the Zip64 zip (exit $status)"
echo "galley validate: zip.zip64, as Dumpling would refuse it"
"$galley" pack "$source" --output "$work/b/" --allow-zip64 --thumbnails none --quiet
cmp "$zip" "$work/b/org.example.big.zip" || fail "a second pack gave other bytes"
echo "a second pack: the same bytes"
echo "zip64-check: passed"
