#!/usr/bin/env bash
# Builds Cowork and serves it on http://127.0.0.1:8080/ (PORT=… to change), with the dev server as
# its backend. Sets the machine up first when needed (see scripts/setup.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$ROOT/scripts/setup.sh"
cd "$ROOT"

say "building the app (release)"
trunk build --release
cargo build -q -p cowork-tests --bin cowork-dev-server
say "serving; press Ctrl-C to stop (the embedding example is at /examples/embed/)"
exec target/debug/cowork-dev-server --dist dist --addr "127.0.0.1:${PORT:-8080}"
