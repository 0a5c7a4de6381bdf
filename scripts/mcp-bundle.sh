#!/usr/bin/env sh
# Post-build step (scripts/post-build.sh): Cowork's MCP client (spec §16), which the storage worker loads
# only when an MCP server is configured, never at start. Bundles web/mcp/index.mjs (and its sibling
# modules) — with the official SDK's client package from the pinned npm packages scripts/setup.sh
# installs — into one file, mcp-<hash>.js, and names it in the page (<meta name="cowork-mcp">). The file
# is a classic script that puts the module's exports on the global `CoworkMcp` (the storage worker is a
# classic worker and loads it with importScripts). Built for browsers: the SDK's browser shims (its JSON
# Schema validator for browsers, CORS-aware discovery). Kept in target/mcp-bundle/ by the hash of its
# sources, so a build with nothing changed only copies it.
set -eu
: "${TRUNK_STAGING_DIR:?run by Trunk as a post_build hook}"
src=web/mcp
esbuild="$src/node_modules/.bin/esbuild"
if [ ! -x "$esbuild" ] || [ ! -d "$src/node_modules/@modelcontextprotocol/client" ]; then
  echo "mcp-bundle.sh: the MCP client's packages are missing ($src/node_modules): run scripts/setup.sh" >&2
  exit 1
fi
cache=target/mcp-bundle
key=$(cat "$src"/*.mjs "$src/package-lock.json" "$0" scripts/bundle-licences.mjs | sha256sum | cut -c1-16)
bundle="$cache/$key.js"
if [ ! -f "$bundle" ]; then
  mkdir -p "$cache"
  rm -f "$cache"/*.js
  "$esbuild" "$src/index.mjs" --bundle --platform=browser --format=iife --global-name=CoworkMcp \
    --footer:js='globalThis.CoworkMcp = CoworkMcp;' --minify --log-level=warning \
    --metafile="$cache/meta.json" --outfile="$bundle.js.tmp"
  node scripts/bundle-licences.mjs "$cache/meta.json" "Cowork's MCP client (web/mcp)" >"$bundle.tmp"
  cat "$bundle.js.tmp" >>"$bundle.tmp"
  rm "$bundle.js.tmp" "$cache/meta.json"
  mv "$bundle.tmp" "$bundle"
fi
name="mcp-$(sha256sum "$bundle" | cut -c1-16).js"
cp "$bundle" "$TRUNK_STAGING_DIR/$name"
page="$TRUNK_STAGING_DIR/index.html"
grep -q '<meta charset="utf-8" />' "$page" || { echo "mcp-bundle.sh: index.html has no <meta charset>" >&2; exit 1; }
sed -i "s|<meta charset=\"utf-8\" />|&\n    <meta name=\"cowork-mcp\" content=\"./$name\" />|" "$page"
