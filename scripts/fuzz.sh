#!/usr/bin/env bash
# Fuzzes cowork-core with cargo-fuzz (libFuzzer): each target, or the one named, for a bounded time.
#
#   scripts/fuzz.sh                      # every target, 600 s each
#   scripts/fuzz.sh jsonl_import 60      # one target, 60 s
#
# Targets (fuzz/fuzz_targets/): sse_parser, search_query, jsonl_import. One process, one job: the run
# takes one core. Installs cargo-fuzz once if it is missing. Needs nightly Rust (`cargo +nightly`);
# without a nightly toolchain it uses the active one with RUSTC_BOOTSTRAP=1.
#
# The committed seeds (fuzz/seeds/<target>/) are read as a second corpus; what the fuzzer finds goes to
# fuzz/corpus/<target>/, crashes to fuzz/artifacts/<target>/, the output to fuzz/logs/<target>.log (all
# three are ignored by git). Reproduce a crash with
#   cargo +nightly fuzz run --sanitizer none <target> fuzz/artifacts/<target>/<file>
# (from the repository root), then turn it into a normal test in core.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ALL_TARGETS=(sse_parser search_query jsonl_import)
SECONDS_EACH="${2:-600}"

say() { printf '\033[1m[fuzz]\033[0m %s\n' "$*" >&2; }

export PATH="$HOME/.cargo/bin:$PATH"

case "${1:-all}" in
  all) TARGETS=("${ALL_TARGETS[@]}") ;;
  sse_parser | search_query | jsonl_import) TARGETS=("$1") ;;
  *) say "unknown target $1 (expected one of: ${ALL_TARGETS[*]}, or all)"; exit 2 ;;
esac
if ! [[ "$SECONDS_EACH" =~ ^[0-9]+$ ]] || [ "$SECONDS_EACH" -eq 0 ]; then
  say "the time per target must be a whole number of seconds, got $SECONDS_EACH"
  exit 2
fi

if ! command -v cargo-fuzz >/dev/null; then
  say "installing cargo-fuzz (a few minutes, once)"
  (cd / && cargo install -q cargo-fuzz --locked)
fi

# libFuzzer's instrumentation needs nightly rustc flags.
CARGO=(cargo)
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  CARGO=(cargo +nightly)
else
  say "no nightly toolchain: using $(rustc --version) with RUSTC_BOOTSTRAP=1"
  export RUSTC_BOOTSTRAP=1
fi

cd "$ROOT"
mkdir -p fuzz/logs
FAILED=()
for target in "${TARGETS[@]}"; do
  mkdir -p "fuzz/corpus/$target"
  extra=()
  if [ "$target" = jsonl_import ]; then extra+=(-dict=fuzz/jsonl.dict); fi
  say "$target: ${SECONDS_EACH}s (log: fuzz/logs/$target.log)"
  # No sanitizer: the core is safe Rust (what libFuzzer checks here are our own assertions and panics),
  # and without AddressSanitizer each run is about twice as fast. Set FUZZ_SANITIZER=address to add it.
  if "${CARGO[@]}" fuzz run --sanitizer "${FUZZ_SANITIZER:-none}" "$target" \
      "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
      -max_total_time="$SECONDS_EACH" -timeout=30 -print_final_stats=1 "${extra[@]}" \
      2>&1 | tee "fuzz/logs/$target.log"; then
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "fuzz/logs/$target.log" | tail -1)"
    say "$target: no failure in ${SECONDS_EACH}s, ${runs:-?} executions"
  else
    say "$target: FAILED, see fuzz/logs/$target.log and fuzz/artifacts/$target/"
    FAILED+=("$target")
  fi
done

if [ "${#FAILED[@]}" -ne 0 ]; then
  say "failures in: ${FAILED[*]}"
  exit 1
fi
