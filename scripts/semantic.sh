#!/usr/bin/env sh
# Post-build step (scripts/post-build.sh): the semantic-recall worker (semantic/), which the storage
# worker starts only when the user turns semantic recall on — never part of the app's start, and not
# precached by the service worker (scripts/service-worker.sh). Writes dist/semantic/:
#   semantic-worker.js   the module worker (semantic/worker/semantic-worker.js: protocol, download, OPFS)
#   semantic.js, semantic_bg.wasm   the embedder (wasm-bindgen --target web), with SIMD128
#   semantic_relaxed.js, semantic_relaxed_bg.wasm   the same with relaxed SIMD too, whose 8-bit dot
#       product speeds up the model's dense layers; the worker loads it where the browser has relaxed
#       SIMD (Chrome and Edge since 114), the first elsewhere. The vectors are the same (semantic/src/int8.rs).
# Always a release build with wasm SIMD, whatever the app's profile: a debug build of the model is far
# too slow to use, and one build serves both. Own target folders (target/semantic, target/semantic-relaxed)
# keep their flags from invalidating the app's build cache; with nothing changed cargo finishes at once.
set -eu
: "${TRUNK_STAGING_DIR:?run by Trunk as a post_build hook}"
out="$TRUNK_STAGING_DIR/semantic"
rm -rf "$out"
# build NAME FEATURES: one build of the embedder, as $out/NAME.js and $out/NAME_bg.wasm.
build() {
  target_dir="target/$(echo "$1" | tr _ -)"
  RUSTFLAGS="-C target-feature=$2" \
    cargo build -q -p cowork-semantic --lib --profile semantic-worker --target wasm32-unknown-unknown \
      --target-dir "$target_dir"
  # No wasm-opt: its -O passes would have to keep the SIMD and bulk-memory features the build uses, and
  # the model's own weights (downloaded separately) dwarf the code.
  wasm-bindgen --target web --out-dir "$out" --out-name "$1" --no-typescript \
    "$target_dir/wasm32-unknown-unknown/semantic-worker/cowork_semantic.wasm"
}
build semantic +simd128
build semantic_relaxed +simd128,+relaxed-simd
cp semantic/worker/semantic-worker.js "$out/"
