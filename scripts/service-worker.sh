#!/usr/bin/env sh
# Trunk post-build hook: writes dist's sw.js from web/pwa/sw.js with this build's file list and a
# version derived from their contents (so every new build gets a new cache, and only then).
set -eu
: "${TRUNK_STAGING_DIR:?run by Trunk as a post_build hook}"
template="$(pwd)/web/pwa/sw.js"
cd "$TRUNK_STAGING_DIR"
# The app's files only: the embedding module and its example (embed/, examples/) are for other pages.
# The highlighter (highlight-<hash>.js), the sync transport (sync-<hash>.js) and the MCP client
# (mcp-<hash>.js) are not fetched at install: each is kept once the app first asks for it (the LAZY list), so the first visit does not
# download them.
# The semantic-recall worker (semantic/: its wasm and the module worker) is not precached: it is
# started only when the user turns semantic recall on; sw.js keeps it from then on (network first) so
# recall by meaning works offline. The model it downloads is kept in OPFS by that worker itself.
files=$(find . -type f ! -name sw.js ! -path './embed/*' ! -path './examples/*' ! -path './semantic/*' \
  ! -name 'highlight-*.js' ! -name 'sync-*.js' ! -name 'mcp-*.js' | sed 's|^\./||' | LC_ALL=C sort)
lazy=$(find . -maxdepth 1 -type f \( -name 'highlight-*.js' -o -name 'sync-*.js' -o -name 'mcp-*.js' \) | sed 's|^\./||' | LC_ALL=C sort)
# shellcheck disable=SC2086 # file names come from the build and have no spaces
version=$(cat $files $lazy | sha256sum | cut -c1-16)
list=$(printf "'./%s', " $files)
lazy_list=""
[ -n "$lazy" ] && lazy_list=$(printf "'./%s', " $lazy)
sed -e "s|__VERSION__|$version|" -e "s|__FILES__|$list|" -e "s|__LAZY__|$lazy_list|" "$template" > sw.js
