#!/usr/bin/env sh
# Trunk's one post-build hook. Trunk starts the hooks of a stage all at once, so the steps that read
# what another writes run here, in order: the highlighter and the sync transport (each a file and a
# <meta> in the page), the embedding module (which takes a copy of the highlighter), the semantic-recall
# worker (dist/semantic/, loaded on demand), the page's Content-Security-Policy, and last the service
# worker, which lists every file.
set -eu
sh scripts/highlight.sh
sh scripts/sync-bundle.sh
sh scripts/embed.sh
sh scripts/semantic.sh
node scripts/csp.mjs
sh scripts/service-worker.sh
