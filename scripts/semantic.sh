#!/usr/bin/env sh
# Post-build step (scripts/post-build.sh): the semantic-recall worker (semantic/), which the storage
# worker starts only when the user turns semantic recall on — never part of the app's start, and not
# precached by the service worker (scripts/service-worker.sh). Writes dist/semantic/:
#   semantic-worker.js   the module worker (semantic/worker/semantic-worker.js: protocol, download, OPFS)
#   semantic.js, semantic_bg.wasm   the embedder (wasm-bindgen --target web)
# Always a release build with wasm SIMD, whatever the app's profile: a debug build of the model is far
# too slow to use, and one build serves both. Its own target folder (target/semantic) keeps its flags
# from invalidating the app's build cache; with nothing changed cargo finishes at once.
set -eu
: "${TRUNK_STAGING_DIR:?run by Trunk as a post_build hook}"
target_dir=target/semantic
RUSTFLAGS="-C target-feature=+simd128" \
  cargo build -q -p cowork-semantic --lib --profile semantic-worker --target wasm32-unknown-unknown \
    --target-dir "$target_dir"
out="$TRUNK_STAGING_DIR/semantic"
rm -rf "$out"
# No wasm-opt: its -O passes would have to keep the SIMD and bulk-memory features the build uses, and
# the model's own weights (downloaded separately) dwarf the code.
wasm-bindgen --target web --out-dir "$out" --out-name semantic --no-typescript \
  "$target_dir/wasm32-unknown-unknown/semantic-worker/cowork_semantic.wasm"
cp semantic/worker/semantic-worker.js "$out/"
