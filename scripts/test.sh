#!/usr/bin/env bash
# Runs every test: native, the sync transport against a real nats-server on loopback and a three-node
# JetStream cluster of them (scripts/nats-cluster.sh, started and stopped by the tests that use it), the
# MCP client against real MCP servers on loopback and the official MCP conformance suite, wasm
# in headless Chromium (dedicated-worker mode on OPFS, and DOM mode), and end-to-end against the served
# app (sync-cluster.test.js: two devices through the cluster, its stream leader killed). Sets the machine
# up first when needed.
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

# --- Lints: cargo fmt --check and cargo clippy -D warnings, natively and for the browser build of the app,
# the worker and the embedding module. The test command never passes code it could not lint: where clippy
# or rustfmt is missing it stops here and says what to install.

# True when `$@` (a cargo command line, e.g. `cargo +stable`) has both clippy and rustfmt.
can_lint() { "$@" clippy --version >/dev/null 2>&1 && "$@" fmt --version >/dev/null 2>&1; }

# Sets LINT to the cargo command line that lints, or fails saying what to install.
choose_lint_cargo() {
  if can_lint cargo; then
    LINT=(cargo)
  elif [ "${RUSTUP_TOOLCHAIN:-}" = "$DEBIAN_TOOLCHAIN" ] && can_lint cargo +stable; then
    # Debian's rustc-web route (setup.sh): that toolchain ships neither clippy nor rustfmt, so rustup's
    # stable toolchain lints instead (it only checks; the build and the tests still use rustc-web).
    say "the $RUSTUP_TOOLCHAIN toolchain has no clippy or rustfmt: linting with cargo +stable"
    LINT=(cargo +stable)
  elif [ "${RUSTUP_TOOLCHAIN:-}" = "$DEBIAN_TOOLCHAIN" ]; then
    say "FAILED: lints: the $RUSTUP_TOOLCHAIN toolchain (Debian's rustc-web) has no clippy or rustfmt, and no"
    say "  rustup toolchain that has them was found. Lints need a rustup toolchain with clippy and rustfmt:"
    say "    rustup toolchain install stable --component clippy,rustfmt"
    say "    rustup target add wasm32-unknown-unknown --toolchain stable   # to lint the browser build"
    say "  then run scripts/test.sh again; it lints with cargo +stable."
    exit 1
  else
    say "FAILED: lints: clippy or rustfmt is missing from the active Rust toolchain. Install them with"
    say "    rustup component add clippy rustfmt"
    exit 1
  fi
}

# Runs one lint; a finding fails the test command.
lint() {
  say "lints: ${LINT[*]} $*"
  if ! "${LINT[@]}" "$@"; then
    say "FAILED: lints (${LINT[*]} $*)"
    exit 1
  fi
}

choose_lint_cargo
lint fmt --all -- --check
lint clippy -q --workspace --all-targets -- -D warnings
if [ "${LINT[*]}" != "cargo" ] && ! has_wasm_std +stable; then
  say "FAILED: lints: the stable toolchain cannot lint the browser build (no wasm32 standard library):"
  say "    rustup target add wasm32-unknown-unknown --toolchain stable"
  exit 1
fi
lint clippy -q --target wasm32-unknown-unknown -p cowork-web -p cowork-embed -p cowork-semantic -p cowork-importer --features cowork-web/worker \
  -- -D warnings
SUMMARY+=("lints: cargo fmt --check, cargo clippy -D warnings (native and wasm32) passed")

stage native cargo test --workspace
stage sync-client npm --prefix web/sync test
# The MCP client against the real reference servers on loopback (each test file starts and stops them with
# scripts/mcp-servers.sh), and the official MCP conformance suite's client scenarios driving it.
stage mcp-client npm --prefix web/mcp test
stage mcp-conformance bash scripts/conformance.sh
stage opfs cargo test -p cowork-core --target wasm32-unknown-unknown --test store_opfs --test opfs_refused
stage dom cargo test -p cowork-web --target wasm32-unknown-unknown --test dom

say "building the app (release) and the dev server for the end-to-end tests"
trunk build --release
cargo build -q -p cowork-tests --bin cowork-dev-server
stage e2e npm --prefix tests/e2e test

say "summary"
printf '  %s\n' "${SUMMARY[@]}"
echo "${TOTAL} passed, 0 failed"
