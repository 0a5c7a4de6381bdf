#!/usr/bin/env sh
# A JS module the storage worker loads lazily, bundled at each build (the post-build steps
# scripts/sync-bundle.sh and scripts/mcp-bundle.sh call this with what differs):
#
#   sh scripts/lazy-bundle.sh NAME SRC GLOBAL PACKAGE TITLE
#
# Bundles SRC/index.mjs (and the modules beside it) with esbuild and the npm packages pinned in
# SRC/package-lock.json (installed by scripts/setup.sh; PACKAGE is the one whose absence means they are
# not) into one file, NAME-<hash>.js, and names it in the page (<meta name="cowork-NAME">). The file is a
# classic script that puts the module's exports on the global GLOBAL: the storage worker is a classic
# worker (Trunk's no-modules build) and loads it with importScripts; `import()` of it works too (then read
# the same global, not the module namespace). The licences of the packages in it (from esbuild's list of
# its inputs) head the file, under TITLE. Kept in target/NAME-bundle/ by the hash of its sources, so a
# build with nothing changed only copies it.
set -eu
: "${TRUNK_STAGING_DIR:?run by Trunk as a post_build hook}"
name=$1 src=$2 global=$3 package=$4 title=$5
esbuild="$src/node_modules/.bin/esbuild"
if [ ! -x "$esbuild" ] || [ ! -d "$src/node_modules/$package" ]; then
  echo "$name-bundle.sh: the packages of $src are missing ($src/node_modules): run scripts/setup.sh" >&2
  exit 1
fi
cache="target/$name-bundle"
# Every module of SRC (index.mjs and what it imports beside it), its lock file and these scripts.
key=$(cat "$src"/*.mjs "$src/package-lock.json" "scripts/$name-bundle.sh" "$0" scripts/bundle-licences.mjs |
  sha256sum | cut -c1-16)
bundle="$cache/$key.js"
if [ ! -f "$bundle" ]; then
  mkdir -p "$cache"
  rm -f "$cache"/*.js
  "$esbuild" "$src/index.mjs" --bundle --platform=browser --format=iife --global-name="$global" \
    --footer:js="globalThis.$global = $global;" --minify --log-level=warning \
    --metafile="$cache/meta.json" --outfile="$bundle.js.tmp"
  node scripts/bundle-licences.mjs "$cache/meta.json" "$title" >"$bundle.tmp"
  cat "$bundle.js.tmp" >>"$bundle.tmp"
  rm "$bundle.js.tmp" "$cache/meta.json"
  mv "$bundle.tmp" "$bundle"
fi
file="$name-$(sha256sum "$bundle" | cut -c1-16).js"
cp "$bundle" "$TRUNK_STAGING_DIR/$file"
page="$TRUNK_STAGING_DIR/index.html"
grep -q '<meta charset="utf-8" />' "$page" || { echo "$name-bundle.sh: index.html has no <meta charset>" >&2; exit 1; }
sed -i "s|<meta charset=\"utf-8\" />|&\n    <meta name=\"cowork-$name\" content=\"./$file\" />|" "$page"
