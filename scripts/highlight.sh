#!/usr/bin/env sh
# Post-build step (scripts/post-build.sh): the code highlighter the app loads when a code block first
# appears (web/src/highlight.rs). Bundles web/highlight/index.mjs — highlight.js's core and the common
# languages, from the pinned npm packages scripts/setup.sh installs — into one ES module,
# highlight-<hash>.js, and names it in the page (<meta name="cowork-highlighter">). The bundle is kept in
# target/highlight/ by the hash of its sources, so a build with nothing changed only copies it.
set -eu
: "${TRUNK_STAGING_DIR:?run by Trunk as a post_build hook}"
src=web/highlight
esbuild="$src/node_modules/.bin/esbuild"
if [ ! -x "$esbuild" ] || [ ! -d "$src/node_modules/highlight.js" ]; then
  echo "highlight.sh: the highlighter's packages are missing ($src/node_modules): run scripts/setup.sh" >&2
  exit 1
fi
cache=target/highlight
key=$(cat "$src/index.mjs" "$src/package-lock.json" | sha256sum | cut -c1-16)
bundle="$cache/$key.js"
if [ ! -f "$bundle" ]; then
  mkdir -p "$cache"
  rm -f "$cache"/*.js
  version=$(node -p "require('./$src/node_modules/highlight.js/package.json').version")
  "$esbuild" "$src/index.mjs" --bundle --format=esm --minify --log-level=warning --outfile="$bundle.js.tmp"
  # highlight.js's licence (BSD-3-Clause) travels with the code.
  { printf '/*! highlight.js %s, bundled for Cowork.\n' "$version"
    sed 's|\*/|* /|g' "$src/node_modules/highlight.js/LICENSE"
    printf '*/\n'
    cat "$bundle.js.tmp"; } >"$bundle.tmp"
  rm "$bundle.js.tmp"
  mv "$bundle.tmp" "$bundle"
fi
name="highlight-$(sha256sum "$bundle" | cut -c1-16).js"
cp "$bundle" "$TRUNK_STAGING_DIR/$name"
page="$TRUNK_STAGING_DIR/index.html"
grep -q '<meta charset="utf-8" />' "$page" || { echo "highlight.sh: index.html has no <meta charset>" >&2; exit 1; }
sed -i "s|<meta charset=\"utf-8\" />|&\n    <meta name=\"cowork-highlighter\" content=\"./$name\" />|" "$page"
