#!/usr/bin/env bash
# A NATS server for Cowork's sync on loopback (tests/nats/server.conf: JetStream on disk, WebSocket,
# users alice, bob and carol). Used by web/sync's tests, the end-to-end tests and by hand:
#   scripts/nats.sh start DIR   starts it on free ports (the same ones again when DIR had a server
#                               before), with its store in DIR/store; waits until it is ready; makes the
#                               streams of the spaces in COWORK_NATS_SPACES (default: alice bob team1 acme)
#                               as that config's administrator would; prints and writes DIR/env
#                               (NATS_URL, NATS_WS_URL, NATS_PID, NATS_STORE)
#   scripts/nats.sh stop DIR    stops it (TERM, then KILL after 10 s)
#   scripts/nats.sh kill DIR    kills it at once (KILL: no goodbye to clients, no flush of its store)
# COWORK_NATS_MAX_PAYLOAD (bytes, default 1 MB) sets the largest message. The server stops by itself
# after COWORK_NATS_LIFETIME seconds (default 900) in case nobody stops it. nats-server and the NATS
# client that makes the streams (web/sync/node_modules) come from scripts/setup.sh; nats-server from
# PATH, or else from where setup installs it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v nats-server >/dev/null; then
  for bin in "${XDG_DATA_HOME:-$HOME/.local/share}"/cowork/nats-server-*/bin; do
    if [ -x "$bin/nats-server" ]; then PATH="$bin:$PATH"; fi
  done
fi
usage() { echo "usage: $0 start|stop|kill DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd="$1"
mkdir -p "$2"
dir="$(cd "$2" && pwd)"

# The pid of the server started in DIR, if it is still running.
running_pid() {
  local pid
  pid="$(cat "$dir/nats.pid" 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

case "$cmd" in
  start)
    command -v nats-server >/dev/null || { echo "nats.sh: nats-server is not installed: source scripts/setup.sh" >&2; exit 1; }
    if pid="$(running_pid)"; then echo "nats.sh: a server is already running in $dir (pid $pid)" >&2; exit 1; fi
    # Reuse the ports of an earlier start in DIR, so clients reconnect to the same address.
    port=-1 ws_port=-1
    if [ -f "$dir/env" ]; then
      port="$(sed -n 's|^NATS_URL=nats://127.0.0.1:||p' "$dir/env")"
      ws_port="$(sed -n 's|^NATS_WS_URL=ws://127.0.0.1:||p' "$dir/env")"
    fi
    mkdir -p "$dir/store"
    rm -f "$dir"/*.ports "$dir/nats.pid"
    COWORK_NATS_PORT="${port:--1}" COWORK_NATS_WS_PORT="${ws_port:--1}" COWORK_NATS_STORE="$dir/store" \
      COWORK_NATS_MAX_PAYLOAD="${COWORK_NATS_MAX_PAYLOAD:-1048576}" \
      setsid timeout "${COWORK_NATS_LIFETIME:-900}" nats-server -c "$ROOT/tests/nats/server.conf" \
        --ports_file_dir "$dir" --pid "$dir/nats.pid" --log "$dir/server.log" </dev/null >/dev/null 2>&1 &
    # Ready when it has written its ports (after every listener is up); 10 s at most.
    for _ in $(seq 100); do
      ports="$(cat "$dir"/*.ports 2>/dev/null || true)"
      [ -n "$ports" ] && [ -s "$dir/nats.pid" ] && break
      sleep 0.1
    done
    if [ -z "${ports:-}" ]; then
      echo "nats.sh: nats-server did not start; its log ($dir/server.log):" >&2
      tail -n 20 "$dir/server.log" >&2 || true
      if pid="$(running_pid)"; then kill -KILL "$pid"; fi
      exit 1
    fi
    nats_url="$(echo "$ports" | sed -n 's|.*"nats":\["\([^"]*\)".*|\1|p')"
    ws_url="$(echo "$ports" | sed -n 's|.*"websocket":\["\([^"]*\)".*|\1|p')"
    { echo "NATS_URL=$nats_url"
      echo "NATS_WS_URL=$ws_url"
      echo "NATS_PID=$(cat "$dir/nats.pid")"
      echo "NATS_STORE=$dir/store"; } >"$dir/env"
    spaces="${COWORK_NATS_SPACES-alice bob team1 acme}"
    if [ -n "$spaces" ]; then
      # shellcheck disable=SC2086 # one argument per space
      if ! (cd "$ROOT/web/sync" && timeout 30 node support/provision.mjs "$ws_url" $spaces) >&2; then
        echo "nats.sh: could not make the streams of $spaces (web/sync's packages: run scripts/setup.sh)" >&2
        kill -TERM "$(cat "$dir/nats.pid")"
        exit 1
      fi
    fi
    cat "$dir/env"
    ;;
  stop)
    pid="$(running_pid)" || exit 0
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    ;;
  kill)
    pid="$(running_pid)" || exit 0
    kill -KILL "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
    ;;
  *) usage ;;
esac
