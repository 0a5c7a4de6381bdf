#!/usr/bin/env sh
# Post-build step (scripts/post-build.sh): the sync transport the storage worker loads when the user
# turns sync on (spec §14), never at start: web/sync/index.mjs (and seal.mjs, follow.mjs…) with the NATS
# clients, bundled as sync-<hash>.js, global `CoworkSync`, named by <meta name="cowork-sync">
# (scripts/lazy-bundle.sh does it).
set -eu
exec sh scripts/lazy-bundle.sh sync web/sync CoworkSync @nats-io/jetstream "Cowork's sync transport (web/sync)"
