#!/usr/bin/env bash
# Runs every test: native, the sync transport against a real nats-server on loopback, wasm in headless
# Chromium (dedicated-worker mode on OPFS, and DOM mode), and end-to-end against the served app. Sets the
# machine up first when needed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$ROOT/scripts/setup.sh"
cd "$ROOT"

export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-120}"
LOGS="$(mktemp -d)"
trap 'rm -rf "$LOGS"' EXIT
SUMMARY=()

sum_numbers() { awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i } END { print s + 0 }'; }

# Runs one stage, shows its output, and records how many tests passed in it.
stage() {
  local name="$1"; shift
  say "$name: $*"
  local log="$LOGS/$name.log"
  if ! "$@" 2>&1 | tee "$log"; then
    say "FAILED: $name"
    exit 1
  fi
  # cargo: "test result: ok. N passed; …"  node: "# pass N"
  local passed ignored
  passed=$( (grep -hoE '(test result: ok\. [0-9]+ passed|^# pass [0-9]+)' "$log" || true) | sum_numbers)
  ignored=$( (grep -hoE '([0-9]+ ignored|^# (skipped|todo) [0-9]+)' "$log" || true) | sum_numbers)
  if [ "${passed:-0}" -eq 0 ]; then
    say "FAILED: $name ran no test"
    exit 1
  fi
  if [ "${ignored:-0}" -ne 0 ]; then
    say "FAILED: $name ignored $ignored tests"
    exit 1
  fi
  SUMMARY+=("$name: $passed passed")
  TOTAL=$(( ${TOTAL:-0} + passed ))
}

say "lints: cargo fmt --check, cargo clippy -D warnings (native, and the browser build of the app, worker and embed module)"
if cargo clippy --version >/dev/null 2>&1 && cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all -- --check
  cargo clippy -q --workspace --all-targets -- -D warnings
  cargo clippy -q --target wasm32-unknown-unknown -p cowork-web -p cowork-embed --features cowork-web/worker -- -D warnings
else
  say "clippy or rustfmt is not part of this toolchain (Debian's rustc-web route): lints skipped"
fi

stage native cargo test --workspace
stage sync-client npm --prefix web/sync test
stage opfs-worker cargo test -p cowork-core --target wasm32-unknown-unknown --test store_opfs
stage dom cargo test -p cowork-web --target wasm32-unknown-unknown --test dom

say "building the app (release) and the dev server for the end-to-end tests"
trunk build --release
cargo build -q -p cowork-tests --bin cowork-dev-server
stage e2e npm --prefix tests/e2e test

say "summary"
printf '  %s\n' "${SUMMARY[@]}"
echo "${TOTAL} passed, 0 failed"
