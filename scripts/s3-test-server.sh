#!/usr/bin/env bash
# A throwaway S3-compatible server on a loopback port (moto's standalone server, from PyPI's
# moto[server]), for the tests of the PostgreSQL store's S3 blobs. It keeps everything in
# memory and leaves nothing behind.
#
#   scripts/s3-test-server.sh run -- COMMAND...   start one, run COMMAND with GALLEY_TEST_S3 set
#                                               to its address, stop it (returns COMMAND's status)
#
# moto is a stand-in for the real service: it answers the S3 API as AWS documents it (buckets,
# PUT, multipart uploads, listings, HEAD, GET, DELETE), without checking signatures. Installed by
# scripts/setup.sh --postgres.
set -euo pipefail

case "${1:-}" in
  run)
    shift
    [ "${1:-}" = "--" ] && shift
    [ $# -ge 1 ] || { echo "usage: $0 run -- COMMAND..." >&2; exit 2; }
    python=python3
    venv="$(cd "$(dirname "$0")/.." && pwd)/.build/tools/moto/bin/python3"
    if ! python3 -c 'import moto.server' 2>/dev/null; then
      if [ -x "$venv" ]; then
        python="$venv"
      else
        echo "s3-test-server: moto's server is not installed; run scripts/setup.sh --postgres" >&2
        exit 2
      fi
    fi
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    log=$(mktemp "${TMPDIR:-/tmp}/galley-s3.XXXXXX")
    "$python" -m moto.server -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
    server=$!
    trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -f "$log"' EXIT
    for _ in $(seq 1 100); do
      if python3 -c "import urllib.request, sys; urllib.request.urlopen('http://127.0.0.1:$port/moto-api/')" 2>/dev/null; then
        break
      fi
      if ! kill -0 "$server" 2>/dev/null; then cat "$log" >&2; exit 2; fi
      sleep 0.1
    done
    echo "s3-test-server: moto S3 at http://127.0.0.1:$port" >&2
    status=0
    GALLEY_TEST_S3="http://127.0.0.1:$port" "$@" || status=$?
    exit "$status"
    ;;
  *)
    echo "usage: $0 run -- COMMAND..." >&2
    exit 2
    ;;
esac
