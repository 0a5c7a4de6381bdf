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
key=$(cat "$src"/*.mjs "$src/package-lock.json" "$0" | sha256sum | cut -c1-16)
bundle="$cache/$key.js"
if [ ! -f "$bundle" ]; then
  mkdir -p "$cache"
  rm -f "$cache"/*.js
  "$esbuild" "$src/index.mjs" --bundle --format=iife --global-name=CoworkSync \
    --footer:js='globalThis.CoworkSync = CoworkSync;' --minify --log-level=warning \
    --metafile="$cache/meta.json" --outfile="$bundle.js.tmp"
  # The licences of the packages in the bundle (from esbuild's list of its inputs) travel with the code:
  # each package's name, version and licence, then each distinct licence text once.
  node --input-type=module - "$cache/meta.json" >"$bundle.tmp" <<'EOF'
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
const inputs = Object.keys(JSON.parse(readFileSync(process.argv[2], 'utf8')).inputs);
const roots = [...new Set(inputs.map((p) => p.match(/^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//)?.[1]).filter(Boolean))].sort();
const texts = new Map();
const lines = roots.map((root) => {
  const { name, version, license } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const file = readdirSync(root).find((f) => /^(licen[cs]e|copying)/i.test(f));
  const text = file ? readFileSync(join(root, file), 'utf8').trim() : `${license} (no licence file in the package)`;
  texts.set(text, [...(texts.get(text) ?? []), name]);
  return ` * ${name} ${version} (${license})`;
});
const body = [...texts].map(([text, names]) => ` * --- ${names.join(', ')} ---\n${text.replaceAll('*/', '* /')}`);
console.log(`/*! Cowork's sync transport (web/sync), bundled with:\n${lines.join('\n')}\n *\n${body.join('\n\n')}\n*/`);
EOF
  cat "$bundle.js.tmp" >>"$bundle.tmp"
  rm "$bundle.js.tmp" "$cache/meta.json"
  mv "$bundle.tmp" "$bundle"
fi
name="sync-$(sha256sum "$bundle" | cut -c1-16).js"
cp "$bundle" "$TRUNK_STAGING_DIR/$name"
page="$TRUNK_STAGING_DIR/index.html"
grep -q '<meta charset="utf-8" />' "$page" || { echo "sync-bundle.sh: index.html has no <meta charset>" >&2; exit 1; }
sed -i "s|<meta charset=\"utf-8\" />|&\n    <meta name=\"cowork-sync\" content=\"./$name\" />|" "$page"
