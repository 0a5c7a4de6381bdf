#!/usr/bin/env sh
# Post-build step (scripts/post-build.sh): the importer — core's readers of other tools' exports
# (ChatGPT, Claude.ai, Claude Code, Codex, OpenAI messages), built from importer/ as a wasm of their
# own, which the storage worker loads with importScripts the first time an import needs it
# (web/src/worker/importer.rs), so the parsers are not part of the worker every start loads. Writes
# dist/import/importer.js (wasm-bindgen's no-modules output, its global `coworkImporter`) and
# dist/import/importer_bg.wasm. Always a release build, whatever the app's profile (one build serves
# both, and cargo finishes at once when nothing changed); the service worker precaches it, so imports
# work offline.
set -eu
: "${TRUNK_STAGING_DIR:?run by Trunk as a post_build hook}"
target_dir="${CARGO_TARGET_DIR:-target}"
# Unstripped, so wasm-bindgen can read the wasm's features; wasm-opt strips the names after it.
CARGO_PROFILE_RELEASE_STRIP=none cargo build -q -p cowork-importer --lib --release --target wasm32-unknown-unknown
out="$TRUNK_STAGING_DIR/import"
rm -rf "$out"
wasm-bindgen --target no-modules --no-modules-global coworkImporter --out-dir "$out" --out-name importer \
  --no-typescript "$target_dir/wasm32-unknown-unknown/release/cowork_importer.wasm"
# The storage worker finds it on the global object (a top-level `let` of a classic script is not one).
printf '\nglobalThis.coworkImporter = coworkImporter;\n' >>"$out/importer.js"
wasm-opt -Oz --strip-debug --strip-producers "$out/importer_bg.wasm" -o "$out/importer_bg.wasm"
