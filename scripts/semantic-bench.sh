#!/usr/bin/env bash
# Measures the semantic-recall embedder: natively (release, semantic/examples/throughput.rs) and as the
# browser worker in headless Chromium (tests/e2e/semantic-bench.js: load from the network and from OPFS,
# turns/s at batch sizes 8/16/32). The worker is built by scripts/semantic.sh into a scratch folder
# beside an empty page, so no app build is needed; the dev server serves it and target/models/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
stage="$ROOT/target/semantic-bench-dist"
rm -rf "$stage"
mkdir -p "$stage"
echo '<!doctype html><title>semantic recall benchmark</title>' >"$stage/index.html"
say "building the semantic worker (scripts/semantic.sh) and the dev server"
TRUNK_STAGING_DIR="$stage" sh scripts/semantic.sh
cargo build -q -p cowork-tests --bin cowork-dev-server
wasm="$stage/semantic/semantic_bg.wasm"
say "worker wasm: $(stat -c %s "$wasm") B raw, $(gzip -9 -c "$wasm" | wc -c) B gzip -9"
say "native throughput (release)"
cargo run -q --release -p cowork-semantic --example throughput
say "the worker in headless Chromium"
COWORK_DIST="$stage" COWORK_DEV_SERVER="${CARGO_TARGET_DIR:-$ROOT/target}/debug/cowork-dev-server" \
  node tests/e2e/semantic-bench.js
