#!/usr/bin/env sh
# Trunk post-build hook: builds the embedding module (web/embed, spec §10) into dist/embed/ — the ES
# module `cowork.js` (wasm-bindgen --target web) with its wasm and TypeScript declarations
# (`cowork.d.ts`), next to a copy of the storage worker it starts (with the importer it loads on an
# import's first use, import/), of the code highlighter and of the MCP client — and copies the example page to
# dist/examples/embed/. Same profile as the app build.
set -eu
: "${TRUNK_STAGING_DIR:?run by Trunk as a post_build hook}"
profile="${TRUNK_PROFILE:-debug}"
flag=""
[ "$profile" = release ] && flag="--release"
# shellcheck disable=SC2086 # an empty flag is no argument
cargo build -q -p cowork-embed --lib --target wasm32-unknown-unknown $flag
out="$TRUNK_STAGING_DIR/embed"
rm -rf "$out"
wasm-bindgen --target web --weak-refs --out-dir "$out" --out-name cowork \
  "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/$profile/cowork_embed.wasm"
# No wasm-opt here, unlike the app's wasm (index.html): on this module -Oz and -Os shrink the raw wasm
# by 15% but make it 8% larger gzipped (1.96 MB / 582 KB gzip → 1.67 MB / 635 KB; BENCHMARKS.md).
cp "$TRUNK_STAGING_DIR/storage-worker_loader.js" "$TRUNK_STAGING_DIR/storage-worker.js" \
  "$TRUNK_STAGING_DIR/storage-worker_bg.wasm" "$out/"
cp -r "$TRUNK_STAGING_DIR/import" "$out/import"
# The code highlighter (scripts/highlight.sh ran first), under a fixed name the module finds.
cp "$TRUNK_STAGING_DIR"/highlight-*.js "$out/highlight.js"
# The MCP client (scripts/mcp-bundle.sh), likewise.
cp "$TRUNK_STAGING_DIR"/mcp-*.js "$out/mcp.js"
cp web/embed/README.md "$out/README.md"
mkdir -p "$TRUNK_STAGING_DIR/examples/embed"
cp web/embed/example/index.html web/embed/example/example.js "$TRUNK_STAGING_DIR/examples/embed/"
