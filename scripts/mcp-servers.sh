#!/usr/bin/env bash
# The real MCP servers the tests use (spec §16), on loopback, from the pinned packages of tests/mcp
# (installed by scripts/setup.sh):
#   scripts/mcp-servers.sh start [ENV]   starts them on free ports, waits until each listens, and prints
#                                        and writes ENV (default target/mcp-servers.env):
#     MCP_EVERYTHING_URL        @modelcontextprotocol/server-everything, Streamable HTTP (CORS: any origin)
#     MCP_EVERYTHING_SSE_URL    the same server in its legacy HTTP+SSE mode (2024-11-05), for the fallback
#     MCP_FILESYSTEM_URL        @modelcontextprotocol/server-filesystem (stdio) behind supergateway,
#                               Streamable HTTP, stateful, `--cors` (any origin)
#     MCP_FILESYSTEM_NOCORS_URL the same bridge without --cors: a server a page cannot read
#     MCP_FS_ROOT               the temporary folder the filesystem server may read and write
#     MCP_OAUTH_URL             an MCP server that requires OAuth (tests/mcp/oauth-server.mjs: the SDK's
#                               authorization server parts, sign-in approved at once, CORS: any origin)
#     MCP_OAUTH_ADMIN           its test endpoints' base: POST …/test/expire expires every access token
#                               now, GET …/test/stats says what it did (registrations, refreshes, …)
#   scripts/mcp-servers.sh stop [ENV]    stops them (TERM, then KILL after 5 s) and removes MCP_FS_ROOT
# Neither server-everything nor supergateway takes a listen address (both listen on every interface):
# each runs with tests/mcp/loopback.mjs preloaded, which binds a listen that names no host to 127.0.0.1.
# CORS, as found: server-everything's streamable mode answers any origin (Access-Control-Allow-Origin: *)
# and exposes mcp-session-id, last-event-id and mcp-protocol-version; supergateway with --cors answers
# any origin and exposes Mcp-Session-Id (with --cors ORIGIN… only those); without --cors it sends no
# CORS header at all (a preflight gets 200 and nothing a browser accepts).
# Each stops by itself after COWORK_MCP_LIFETIME seconds (default 1800) in case nobody stops it. Their
# state (pids, logs, the folder) is in the directory beside ENV named after it (ENV without `.env`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG="$ROOT/tests/mcp"
usage() { echo "usage: $0 start|stop [ENV]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
cmd="$1"
env_file="${2:-$ROOT/target/mcp-servers.env}"
mkdir -p "$(dirname "$env_file")"
env_file="$(cd "$(dirname "$env_file")" && pwd)/$(basename "$env_file")"
dir="${env_file%.env}.d"

# Stops every server started in $dir (each the leader of its own process group: its children go too).
stop_all() {
  local pid pids=()
  for f in "$dir"/*.pid; do
    [ -e "$f" ] || continue
    pid="$(cat "$f")"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$f"
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
}

# A free TCP port on 127.0.0.1 (the kernel's choice).
free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

# start NAME PORT COMMAND...: runs COMMAND (a node script) with the loopback preload, in its own process
# group, bounded in time, its output in NAME.log; waits up to 20 s until PORT listens.
start() {
  local name="$1" port="$2"; shift 2
  PORT="$port" setsid timeout "${COWORK_MCP_LIFETIME:-1800}" node --import "$PKG/loopback.mjs" "$@" \
    </dev/null >"$dir/$name.log" 2>&1 &
  echo $! >"$dir/$name.pid"
  for _ in $(seq 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    if ! kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null; then break; fi
    sleep 0.1
  done
  echo "mcp-servers.sh: $name did not start on 127.0.0.1:$port; its log ($dir/$name.log):" >&2
  tail -n 20 "$dir/$name.log" >&2 || true
  stop_all
  exit 1
}

case "$cmd" in
  start)
    if [ ! -x "$PKG/node_modules/.bin/supergateway" ]; then
      echo "mcp-servers.sh: the MCP test servers are not installed ($PKG/node_modules): source scripts/setup.sh" >&2
      exit 1
    fi
    stop_all 2>/dev/null || true
    mkdir -p "$dir"
    fs_root="$(mktemp -d "${TMPDIR:-/tmp}/cowork-mcp-fs-XXXXXX")"
    echo "$fs_root" >"$dir/fs-root"
    everything="$PKG/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    gateway="$PKG/node_modules/supergateway/dist/index.js"
    filesystem="node $PKG/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js $fs_root"
    p1="$(free_port)"; start everything "$p1" "$everything" streamableHttp
    p2="$(free_port)"; start everything-sse "$p2" "$everything" sse
    # supergateway spawns the stdio server itself; its --port is also passed as PORT (unused by it).
    p3="$(free_port)"; start filesystem "$p3" "$gateway" --stdio "$filesystem" --outputTransport streamableHttp \
      --stateful --port "$p3" --cors --logLevel none
    p4="$(free_port)"; start filesystem-nocors "$p4" "$gateway" --stdio "$filesystem" --outputTransport streamableHttp \
      --stateful --port "$p4" --logLevel none
    p5="$(free_port)"; start oauth "$p5" "$PKG/oauth-server.mjs"
    { echo "MCP_EVERYTHING_URL=http://127.0.0.1:$p1/mcp"
      echo "MCP_EVERYTHING_SSE_URL=http://127.0.0.1:$p2/sse"
      echo "MCP_FILESYSTEM_URL=http://127.0.0.1:$p3/mcp"
      echo "MCP_FILESYSTEM_NOCORS_URL=http://127.0.0.1:$p4/mcp"
      echo "MCP_FS_ROOT=$fs_root"
      echo "MCP_OAUTH_URL=http://127.0.0.1:$p5/mcp"
      echo "MCP_OAUTH_ADMIN=http://127.0.0.1:$p5/test"; } >"$env_file"
    cat "$env_file"
    ;;
  stop)
    [ -d "$dir" ] || exit 0
    stop_all
    if [ -f "$dir/fs-root" ]; then
      fs_root="$(cat "$dir/fs-root")"
      case "$fs_root" in */cowork-mcp-fs-*) rm -rf "$fs_root" ;; esac
      rm -f "$dir/fs-root"
    fi
    ;;
  *) usage ;;
esac
