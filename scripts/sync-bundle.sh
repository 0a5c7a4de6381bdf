#!/usr/bin/env sh
# Post-build step (scripts/post-build.sh): the sync transport the storage worker loads when the user
# turns sync on (spec §14), never at start. Bundles web/sync/index.mjs (and seal.mjs) — with the NATS clients from the
# pinned npm packages scripts/setup.sh installs — into one file, sync-<hash>.js, and names it in the
# page (<meta name="cowork-sync">). The file is a classic script that puts the module's exports on the
# global `CoworkSync`: the storage worker is a classic worker (Trunk's no-modules build) and loads it with
# importScripts; `import()` of it works too (then read the same global, not the module namespace).
# The bundle is kept in target/sync-bundle/ by the hash of its sources, so a build with nothing changed
# only copies it.
set -eu
: "${TRUNK_STAGING_DIR:?run by Trunk as a post_build hook}"
src=web/sync
esbuild="$src/node_modules/.bin/esbuild"
if [ ! -x "$esbuild" ] || [ ! -d "$src/node_modules/@nats-io/jetstream" ]; then
  echo "sync-bundle.sh: the sync module's packages are missing ($src/node_modules): run scripts/setup.sh" >&2
  exit 1
fi
cache=target/sync-bundle
# Every module of the transport (index.mjs and what it imports beside it, seal.mjs…) is in the hash.
key=$(cat "$src"/*.mjs "$src/package-lock.json" "$0" scripts/bundle-licences.mjs | sha256sum | cut -c1-16)
bundle="$cache/$key.js"
if [ ! -f "$bundle" ]; then
  mkdir -p "$cache"
  rm -f "$cache"/*.js
  "$esbuild" "$src/index.mjs" --bundle --format=iife --global-name=CoworkSync \
    --footer:js='globalThis.CoworkSync = CoworkSync;' --minify --log-level=warning \
    --metafile="$cache/meta.json" --outfile="$bundle.js.tmp"
  # The licences of the packages in the bundle (from esbuild's list of its inputs) travel with the code.
  node scripts/bundle-licences.mjs "$cache/meta.json" "Cowork's sync transport (web/sync)" >"$bundle.tmp"
  cat "$bundle.js.tmp" >>"$bundle.tmp"
  rm "$bundle.js.tmp" "$cache/meta.json"
  mv "$bundle.tmp" "$bundle"
fi
name="sync-$(sha256sum "$bundle" | cut -c1-16).js"
cp "$bundle" "$TRUNK_STAGING_DIR/$name"
page="$TRUNK_STAGING_DIR/index.html"
grep -q '<meta charset="utf-8" />' "$page" || { echo "sync-bundle.sh: index.html has no <meta charset>" >&2; exit 1; }
sed -i "s|<meta charset=\"utf-8\" />|&\n    <meta name=\"cowork-sync\" content=\"./$name\" />|" "$page"
