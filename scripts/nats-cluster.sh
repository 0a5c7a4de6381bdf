#!/usr/bin/env bash
# A three-node NATS JetStream cluster on loopback for Cowork's sync (tests/nats/cluster.conf: the single
# server's accounts and users, routes between the nodes, JetStream on disk and a WebSocket listener on
# each node). What a team or a hosted NATS runs; used by the end-to-end tests, the benchmark and by hand:
#   scripts/nats-cluster.sh start DIR     starts nodes 1, 2 and 3 on free loopback ports, each with its
#                                         store in DIR/N/store; waits until JetStream has a leader; makes
#                                         the streams of the spaces in COWORK_NATS_SPACES (default: alice
#                                         bob team1 acme) with three replicas; prints and writes DIR/env
#                                         (NATS_WS_URLS and NATS_URLS, comma-separated, and per node
#                                         NATS_WS_URL_N, NATS_PID_N, NATS_STORE_N)
#   scripts/nats-cluster.sh start DIR N   starts node N again (after `kill`), on its earlier ports
#   scripts/nats-cluster.sh kill DIR N    kills node N at once (KILL: no goodbye, no flush of its store)
#   scripts/nats-cluster.sh stop DIR      stops every node (TERM, then KILL after 10 s)
# Every node stops by itself after COWORK_NATS_LIFETIME seconds (default 900) in case nobody stops it.
# COWORK_NATS_MAX_PAYLOAD (bytes, default 1 MB) sets the largest message. nats-server and the NATS
# client that makes the streams (web/sync/node_modules) come from scripts/setup.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v nats-server >/dev/null; then
  for bin in "${XDG_DATA_HOME:-$HOME/.local/share}"/cowork/nats-server-*/bin; do
    if [ -x "$bin/nats-server" ]; then PATH="$bin:$PATH"; fi
  done
fi
NODES=(1 2 3)
usage() { echo "usage: $0 start DIR [NODE] | kill DIR NODE | stop DIR   (NODE: 1, 2 or 3)" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 3 ] || usage
cmd="$1"
mkdir -p "$2"
dir="$(cd "$2" && pwd)"
node="${3:-}"
if [ -n "$node" ] && ! [[ "$node" =~ ^[123]$ ]]; then usage; fi

# The pid of node N, if it is still running.
running_pid() {
  local pid
  pid="$(cat "$dir/$1/nats.pid" 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# DIR/ports: per node its client, WebSocket and route ports, chosen once (free loopback ports) and kept,
# so a node started again listens where the others and the clients look for it.
choose_ports() {
  [ -s "$dir/ports" ] && return
  (cd "$ROOT/web/sync" && timeout 10 node -e '
    const net = require("node:net");
    (async () => {
      const servers = [];
      for (let i = 0; i < 9; i++) {
        const s = net.createServer();
        await new Promise((ok, fail) => s.once("error", fail).listen(0, "127.0.0.1", ok));
        servers.push(s);
      }
      const ports = servers.map((s) => s.address().port);
      for (const s of servers) s.close();
      for (let n = 0; n < 3; n++) console.log(ports.slice(n * 3, n * 3 + 3).join(" "));
    })();') >"$dir/ports"
}

# The port of kind K (1: client, 2: WebSocket, 3: route) of node N.
port() { sed -n "${1}p" "$dir/ports" | cut -d' ' -f"$2"; }

# Starts node N and waits until it listens (10 s at most).
start_node() {
  local n="$1" pid
  if pid="$(running_pid "$n")"; then echo "nats-cluster.sh: node $n is already running in $dir (pid $pid)" >&2; exit 1; fi
  mkdir -p "$dir/$n/store"
  rm -f "$dir/$n"/*.ports "$dir/$n/nats.pid"
  COWORK_NATS_NAME="cowork-$n" COWORK_NATS_PORT="$(port "$n" 1)" COWORK_NATS_WS_PORT="$(port "$n" 2)" \
    COWORK_NATS_CLUSTER_PORT="$(port "$n" 3)" COWORK_NATS_STORE="$dir/$n/store" \
    COWORK_NATS_ROUTE_1="nats-route://127.0.0.1:$(port 1 3)" COWORK_NATS_ROUTE_2="nats-route://127.0.0.1:$(port 2 3)" \
    COWORK_NATS_ROUTE_3="nats-route://127.0.0.1:$(port 3 3)" \
    COWORK_NATS_MAX_PAYLOAD="${COWORK_NATS_MAX_PAYLOAD:-1048576}" \
    setsid timeout "${COWORK_NATS_LIFETIME:-900}" nats-server -c "$ROOT/tests/nats/cluster.conf" \
      --ports_file_dir "$dir/$n" --pid "$dir/$n/nats.pid" --log "$dir/$n/server.log" </dev/null >/dev/null 2>&1 &
  for _ in $(seq 100); do
    if compgen -G "$dir/$n/*.ports" >/dev/null && [ -s "$dir/$n/nats.pid" ]; then return; fi
    sleep 0.1
  done
  echo "nats-cluster.sh: node $n did not start; its log ($dir/$n/server.log):" >&2
  tail -n 20 "$dir/$n/server.log" >&2 || true
  if pid="$(running_pid "$n")"; then kill -KILL "$pid"; fi
  exit 1
}

stop_node() { # N SIGNAL
  local pid
  pid="$(running_pid "$1")" || return 0
  kill "-$2" "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}


write_env() {
  local n urls=() ws=()
  for n in "${NODES[@]}"; do
    urls+=("nats://127.0.0.1:$(port "$n" 1)")
    ws+=("ws://127.0.0.1:$(port "$n" 2)")
  done
  {
    echo "NATS_WS_URLS=$(IFS=,; echo "${ws[*]}")"
    echo "NATS_URLS=$(IFS=,; echo "${urls[*]}")"
    for n in "${NODES[@]}"; do
      echo "NATS_WS_URL_$n=${ws[$((n - 1))]}"
      echo "NATS_PID_$n=$(cat "$dir/$n/nats.pid" 2>/dev/null || true)"
      echo "NATS_STORE_$n=$dir/$n/store"
    done
  } >"$dir/env"
}

case "$cmd" in
  start)
    command -v nats-server >/dev/null || { echo "nats-cluster.sh: nats-server is not installed: source scripts/setup.sh" >&2; exit 1; }
    if [ -n "$node" ]; then
      [ -s "$dir/ports" ] || { echo "nats-cluster.sh: no cluster was started in $dir" >&2; exit 1; }
      start_node "$node"
      write_env
      cat "$dir/env"
      exit 0
    fi
    choose_ports
    for n in "${NODES[@]}"; do start_node "$n"; done
    write_env
    ws="$(sed -n 's/^NATS_WS_URLS=//p' "$dir/env")"
    # JetStream answers once the nodes have elected a leader: provision.mjs waits for that (30 s at most).
    spaces="${COWORK_NATS_SPACES-alice bob team1 acme}"
    # shellcheck disable=SC2086 # one argument per space
    if ! (cd "$ROOT/web/sync" && timeout 60 node support/provision.mjs --replicas 3 "$ws" $spaces) >&2; then
      echo "nats-cluster.sh: the cluster's JetStream did not come up, or the streams of $spaces could not be made; node logs in $dir/*/server.log" >&2
      for n in "${NODES[@]}"; do stop_node "$n" TERM; done
      exit 1
    fi
    cat "$dir/env"
    ;;
  kill)
    [ -n "$node" ] || usage
    stop_node "$node" KILL
    ;;
  stop)
    [ -z "$node" ] || usage
    for n in "${NODES[@]}"; do stop_node "$n" TERM & done
    wait
    ;;
  *) usage ;;
esac
