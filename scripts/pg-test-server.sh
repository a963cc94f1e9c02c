#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on a loopback port, for Galley's PostgreSQL store tests and for
# trying the backend by hand. It lives in one folder and leaves nothing anywhere else.
#
#   scripts/pg-test-server.sh run -- COMMAND...   start a cluster, run COMMAND with
#                                               GALLEY_TEST_POSTGRES set to its address, stop it
#                                               (whatever COMMAND's exit status, which it returns)
#   scripts/pg-test-server.sh start DIR [--crash-test]
#                                               start one in DIR (made if missing, on the port it
#                                               had before); prints its address
#   scripts/pg-test-server.sh crash DIR           stop it as a crash would (an immediate stop: no
#                                               checkpoint, what was not yet durable is lost)
#   scripts/pg-test-server.sh stop DIR            stop it (DIR is left for you to remove)
#
# The clusters of `run` and `start` trade durability for speed (fsync, full-page writes and
# synchronous commits off): the tests create and drop many databases. `--crash-test` makes one
# whose files are durable (fsync and full-page writes on) while commits are still acknowledged
# before they are (synchronous_commit=off, the WAL written at most every 10 s): what a crash
# loses there is what a server so configured loses, for the tests that kill it.
#
# The address is postgres://galley@127.0.0.1:PORT/galley: a superuser `galley` that needs no
# password from loopback (trust), on a free port. The server listens on 127.0.0.1 only, and its
# Unix socket lives in DIR. As root, the cluster runs as the unprivileged `postgres` user (made by
# Debian's package; PostgreSQL refuses to run as root). Needs Debian's postgresql package
# (`scripts/setup.sh --postgres`).
set -euo pipefail

bin_dir() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -z "$found" ] || [ ! -x "$found/initdb" ]; then
    echo "pg-test-server: no PostgreSQL server found under /usr/lib/postgresql; run scripts/setup.sh --postgres" >&2
    exit 2
  fi
  echo "$found"
}

# Runs a command as the cluster's owner: the postgres user when we are root, else ourselves.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  local dir="$1" mode="${2:-}" bin port durability
  bin=$(bin_dir)
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    if ! id postgres >/dev/null 2>&1; then
      echo "pg-test-server: no postgres user to run the server as; run scripts/setup.sh --postgres" >&2
      exit 2
    fi
    chown postgres: "$dir"
    # The owner must reach DIR through its parents (mktemp's folders are 700 root-owned).
    chmod a+x "$(dirname "$dir")" 2>/dev/null || true
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_owner "$bin/initdb" --pgdata="$dir/data" --username=galley --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
      --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 2; }
  fi
  # A restarted cluster keeps its port, so a store's address stays true across a crash.
  if [ -f "$dir/port" ]; then port=$(cat "$dir/port"); else port=$(free_port); echo "$port" >"$dir/port"; fi
  if [ "$mode" = --crash-test ]; then
    durability="-c fsync=on -c full_page_writes=on -c synchronous_commit=off -c wal_writer_delay=10000"
  else
    durability="-c fsync=off -c full_page_writes=off -c synchronous_commit=off"
  fi
  if ! as_owner "$bin/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait --timeout=60 \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir $durability -c max_connections=200" \
      start >/dev/null; then
    cat "$dir/server.log" >&2
    exit 2
  fi
  if ! as_owner "$bin/psql" --host=127.0.0.1 --port="$port" --username=galley -lqt | cut -d'|' -f1 | grep -qw galley; then
    as_owner "$bin/createdb" --host=127.0.0.1 --port="$port" --username=galley galley
  fi
  echo "postgres://galley@127.0.0.1:$port/galley" >"$dir/url"
  cat "$dir/url"
}

stop() {
  local dir="$1" mode="${2:-fast}" bin
  bin=$(bin_dir)
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" --pgdata="$dir/data" --mode="$mode" --wait stop >/dev/null 2>&1 || true
  fi
}

# What `run` does on its way out: stops the cluster and removes its folder, and fails (after
# stopping it the hard way) when the server outlived a fast stop, so a leaked server is an error
# CI sees rather than a process found by chance later.
finish_run() {
  local status=$? dir="$1" bin
  stop "$dir/cluster"
  if [ -f "$dir/cluster/data/postmaster.pid" ]; then
    bin=$(bin_dir)
    echo "pg-test-server: the cluster in $dir/cluster was still running after a fast stop; stopping it at once" >&2
    as_owner "$bin/pg_ctl" --pgdata="$dir/cluster/data" --mode=immediate --wait stop >/dev/null 2>&1 || true
    [ "$status" -ne 0 ] || status=1
  fi
  rm -rf "$dir"
  exit "$status"
}

case "${1:-}" in
  start)
    [ $# -eq 2 ] || { [ $# -eq 3 ] && [ "$3" = --crash-test ]; } || { echo "usage: $0 start DIR [--crash-test]" >&2; exit 2; }
    start "$2" "${3:-}"
    ;;
  crash)
    [ $# -eq 2 ] || { echo "usage: $0 crash DIR" >&2; exit 2; }
    stop "$2" immediate
    ;;
  stop)
    [ $# -eq 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }
    stop "$2"
    ;;
  run)
    shift
    [ "${1:-}" = "--" ] && shift
    [ $# -ge 1 ] || { echo "usage: $0 run -- COMMAND..." >&2; exit 2; }
    dir=$(mktemp -d "${TMPDIR:-/tmp}/galley-pg.XXXXXX")
    trap 'finish_run "$dir"' EXIT
    url=$(start "$dir/cluster")
    echo "pg-test-server: PostgreSQL at $url" >&2
    status=0
    GALLEY_TEST_POSTGRES="$url" "$@" || status=$?
    exit "$status"
    ;;
  *)
    echo "usage: $0 run -- COMMAND... | start DIR [--crash-test] | crash DIR | stop DIR" >&2
    exit 2
    ;;
esac
