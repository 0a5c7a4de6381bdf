#!/usr/bin/env bash
# The benchmark of spec §13: builds in release mode, runs the real store on OPFS in headless Chromium
# beside its peers, measures the app's cold start, prints one table and writes
# bench-results/bench-results.json. Takes a few minutes. `scripts/bench.sh --quick` checks the harness
# on a small archive (its figures mean nothing); `--stream-only` runs only the streaming rows (a 12 KB
# Markdown reply streamed into the app, tests/bench/stream.mjs) and counts the cold-start bytes.
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

say "starting a NATS server on loopback for the sync rows (scripts/nats.sh; stopped at the end)"
NATS_DIR="$(mktemp -d)"
trap 'scripts/nats.sh stop "$NATS_DIR" || true; rm -rf "$NATS_DIR"' EXIT
NATS_WS_URL="$(COWORK_NATS_SPACES="" COWORK_NATS_LIFETIME=1800 scripts/nats.sh start "$NATS_DIR" | sed -n 's/^NATS_WS_URL=//p')"

say "running the benchmark in headless Chromium"
node tests/bench/run.mjs --pkg "$PKG" --dist "$ROOT/dist" --server "$ROOT/target/debug/cowork-dev-server" \
  --out "$ROOT/bench-results/bench-results.json" --nats "$NATS_WS_URL" "$@"

# The import of a generated 100 MB ChatGPT export (5,000 conversations). Natively, on a file archive:
# the browser harness has no phase for it yet (see BENCHMARKS.md for what that leaves out).
say "importing a generated 100 MB ChatGPT export (native)"
if [[ " $* " == *" --quick "* ]]; then
  cargo run -q --release -p cowork-bench --example import -- 200 4
else
  cargo run -q --release -p cowork-bench --example import
fi
