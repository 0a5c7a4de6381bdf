#!/usr/bin/env bash
# The benchmark of spec §13: builds in release mode, runs the real store on OPFS in headless Chromium
# beside its peers, measures the app's cold start, prints one table and writes
# bench-results/bench-results.json (and, natively, the import rows and, when COWORK_LOCOMO names the
# LoCoMo data, the retrieval-recall rows: bench-results/locomo.json). Takes a few minutes. `scripts/bench.sh --quick` checks the harness
# on a small archive (its figures mean nothing); `--stream-only` runs only the streaming rows (a 12 KB
# Markdown reply streamed into the app, tests/bench/stream.mjs) and counts the cold-start bytes;
# `--sync-only` runs only device-to-device latency, through one server and through a three-node cluster;
# `--first-sync-only` only the 100k-turn first sync (seeded without the searches, sent, received whole).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$ROOT/scripts/setup.sh"
cd "$ROOT"

say "building the benchmark's wasm (release) and the app (trunk build --release)"
cargo build -q --release --target wasm32-unknown-unknown -p cowork-bench
PKG="$ROOT/target/bench-pkg"
rm -rf "$PKG"
wasm-bindgen --target web --no-typescript --out-dir "$PKG" target/wasm32-unknown-unknown/release/cowork_bench.wasm
trunk build --release
cargo build -q -p cowork-tests --bin cowork-dev-server

say "starting a NATS server and a three-node cluster on loopback for the sync rows (scripts/nats.sh, scripts/nats-cluster.sh; stopped at the end)"
NATS_DIR="$(mktemp -d)"
CLUSTER_DIR="$(mktemp -d)"
stop_nats() { scripts/nats.sh stop "$NATS_DIR" || true; scripts/nats-cluster.sh stop "$CLUSTER_DIR" || true; rm -rf "$NATS_DIR" "$CLUSTER_DIR"; }
trap stop_nats EXIT
NATS_WS_URL="$(COWORK_NATS_SPACES="" COWORK_NATS_LIFETIME=1800 scripts/nats.sh start "$NATS_DIR" | sed -n 's/^NATS_WS_URL=//p')"
NATS_WS_URLS="$(COWORK_NATS_SPACES="" COWORK_NATS_LIFETIME=1800 scripts/nats-cluster.sh start "$CLUSTER_DIR" | sed -n 's/^NATS_WS_URLS=//p')"

say "starting server-everything on loopback for the MCP tool-call row (scripts/mcp-servers.sh; stopped at the end)"
MCP_DIR="$(mktemp -d)"
stop_servers() { scripts/mcp-servers.sh stop "$MCP_DIR/servers.env" || true; rm -rf "$MCP_DIR"; stop_nats; }
trap stop_servers EXIT
MCP_EVERYTHING_URL="$(scripts/mcp-servers.sh start "$MCP_DIR/servers.env" | sed -n 's/^MCP_EVERYTHING_URL=//p')"

say "running the benchmark in headless Chromium"
node tests/bench/run.mjs --pkg "$PKG" --dist "$ROOT/dist" --server "$ROOT/target/debug/cowork-dev-server" \
  --out "$ROOT/bench-results/bench-results.json" --nats "$NATS_WS_URL" --nats-cluster "$NATS_WS_URLS" \
  --mcp "$MCP_EVERYTHING_URL" "$@"
if [[ " $* " == *" --sync-only "* || " $* " == *" --first-sync-only "* ]]; then exit 0; fi

# Recall by meaning's model worker, as the app built it (dist/semantic/), in headless Chromium: its load
# from the network and from OPFS, embedding throughput in turns/s and a search query's embedding time
# (tests/e2e/semantic-bench.js), for each model.
say "recall by meaning: the model worker in headless Chromium (load, turns/s)"
COWORK_DIST="$ROOT/dist" COWORK_DEV_SERVER="$ROOT/target/debug/cowork-dev-server" \
  BENCH_SECONDS="$([[ " $* " == *" --quick "* ]] && echo 2 || echo 6)" node tests/e2e/semantic-bench.js \
  | tee "$ROOT/bench-results/semantic.json"
say "recall by meaning: the larger model (all-mpnet-base-v2) in the same worker"
COWORK_DIST="$ROOT/dist" COWORK_DEV_SERVER="$ROOT/target/debug/cowork-dev-server" COWORK_SEMANTIC_MODEL=all-mpnet-base-v2 \
  BENCH_SECONDS="$([[ " $* " == *" --quick "* ]] && echo 2 || echo 6)" node tests/e2e/semantic-bench.js \
  | tee "$ROOT/bench-results/semantic-mpnet.json"
# The same through the app: realistic turns imported, recall by meaning turned on in Storage, the index's
# progress read for a fixed time, and Ctrl+K searches meanwhile (tests/e2e/semantic-app-bench.js).
say "recall by meaning: the app's own background indexing, each model"
COWORK_DIST="$ROOT/dist" COWORK_DEV_SERVER="$ROOT/target/debug/cowork-dev-server" \
  BENCH_SECONDS="$([[ " $* " == *" --quick "* ]] && echo 10 || echo 40)" node tests/e2e/semantic-app-bench.js \
  | tee "$ROOT/bench-results/semantic-app.json"
COWORK_DIST="$ROOT/dist" COWORK_DEV_SERVER="$ROOT/target/debug/cowork-dev-server" COWORK_SEMANTIC_MODEL=all-mpnet-base-v2 \
  BENCH_TURNS=600 BENCH_SECONDS="$([[ " $* " == *" --quick "* ]] && echo 10 || echo 60)" node tests/e2e/semantic-app-bench.js \
  | tee "$ROOT/bench-results/semantic-app-mpnet.json"

# The import of a generated 100 MB ChatGPT export (5,000 conversations). Natively, on a file archive:
# the browser harness has no phase for it yet (see BENCHMARKS.md for what that leaves out).
say "importing a generated 100 MB ChatGPT export (native)"
if [[ " $* " == *" --quick "* ]]; then
  cargo run -q --release -p cowork-bench --example import -- 200 4
else
  cargo run -q --release -p cowork-bench --example import
fi

# Retrieval quality on LoCoMo (natively, tests/bench/examples/locomo.rs), once per embedding model:
# bench-results/locomo.json (all-MiniLM-L6-v2, the default) and locomo-mpnet.json (all-mpnet-base-v2,
# about 20 minutes more: it embeds the 5,882 turns at about 5 a second). The data has no licence, so it
# is not in the repository: COWORK_LOCOMO names the public snap-research/locomo repository's
# data/locomo10.zip (unpacked here to a temporary folder) or a folder holding its JSON files.
locomo() {
  COWORK_LOCOMO="$1" cargo run -q --release -p cowork-bench --example locomo -- --out "$ROOT/bench-results/locomo.json"
  COWORK_LOCOMO="$1" cargo run -q --release -p cowork-bench --example locomo -- --model all-mpnet-base-v2 \
    --out "$ROOT/bench-results/locomo-mpnet.json"
}
if [[ -z "${COWORK_LOCOMO:-}" ]]; then
  say "LoCoMo rows skipped: COWORK_LOCOMO is not set (get data/locomo10.zip from the public snap-research/locomo repository and set COWORK_LOCOMO=/path/to/locomo10.zip)"
elif [[ -f "$COWORK_LOCOMO" ]]; then
  say "LoCoMo retrieval recall (native; unpacking $COWORK_LOCOMO)"
  LOCOMO_DIR="$(mktemp -d)"
  trap 'stop_servers; rm -rf "$LOCOMO_DIR"' EXIT
  python3 -m zipfile -e "$COWORK_LOCOMO" "$LOCOMO_DIR"
  locomo "$LOCOMO_DIR"
else
  say "LoCoMo retrieval recall (native, from $COWORK_LOCOMO)"
  locomo "$COWORK_LOCOMO"
fi
