#!/usr/bin/env sh
# Trunk post-build hook: writes dist's sw.js from web/pwa/sw.js with this build's file list and a
# version derived from their contents (so every new build gets a new cache, and only then).
set -eu
: "${TRUNK_STAGING_DIR:?run by Trunk as a post_build hook}"
template="$(pwd)/web/pwa/sw.js"
cd "$TRUNK_STAGING_DIR"
# The app's files only: the embedding module and its example (embed/, examples/) are for other pages.
files=$(find . -type f ! -name sw.js ! -path './embed/*' ! -path './examples/*' | sed 's|^\./||' | LC_ALL=C sort)
# shellcheck disable=SC2086 # file names come from the build and have no spaces
version=$(cat $files | sha256sum | cut -c1-16)
list=$(printf "'./%s', " $files)
sed -e "s|__VERSION__|$version|" -e "s|__FILES__|$list|" "$template" > sw.js
