#!/usr/bin/env sh
# Trunk's one post-build hook. Trunk starts the hooks of a stage all at once, so the steps that read
# what another writes run here, in order: wasm-bindgen's glue of the app and the worker minified, the highlighter, the sync transport and the MCP client (each a
# file and a <meta> in the page), the importer of other tools' exports (dist/import/, loaded on an import's first
# use), the embedding module (which takes a copy of the highlighter and the importer), the semantic-recall
# worker (dist/semantic/, loaded on demand), the OAuth sign-in window (dist/oauth/), the page's Content-Security-Policy, and last the service
# worker, which lists every file. First, a check: a wasm module that imports from "env" is one whose C
# code (SQLite, .cargo/config.toml) calls a function the build left out, and would not start.
set -eu
dist="${TRUNK_STAGING_DIR:-dist}"
if grep -l -E 'require\("env"\)|from "env"' "$dist"/*.js 2>/dev/null; then
  echo "post-build: the wasm above imports functions from \"env\" (undefined C symbols): see .cargo/config.toml" >&2
  exit 1
fi
node scripts/minify-glue.mjs
sh scripts/highlight.sh
sh scripts/sync-bundle.sh
sh scripts/mcp-bundle.sh
sh scripts/importer.sh
sh scripts/embed.sh
sh scripts/semantic.sh
sh scripts/oauth-page.sh
node scripts/csp.mjs
sh scripts/service-worker.sh
