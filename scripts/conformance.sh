#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in tests/mcp) in client
# mode, driving Cowork's own MCP client (web/mcp/index.mjs, the module the storage worker loads) through
# web/mcp/conformance/driver.mjs. Runs every client scenario the suite lists (`conformance list
# --client`: the core ones, the auth suite, the drafts and the extensions), one at a time, prints one
# line per scenario and the total, and exits non-zero on an unexpected result: a scenario failing that
# is not in the baseline (web/mcp/conformance/expected-failures.yml, each entry with its reason), or
# one passing that still is. The suite runs on Node 22 (it needs fs.globSync), from scripts/setup.sh;
# its test servers listen on 127.0.0.1 only (tests/mcp/loopback.mjs preloaded). No input; CI=true.
#   scripts/conformance.sh [SCENARIO...]   (default: every client scenario)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -z "${NODE22:-}" ]; then
  # shellcheck source=scripts/setup.sh
  source "$ROOT/scripts/setup.sh"
fi
cd "$ROOT"
export CI=true
suite=(timeout 900 "$NODE22" --import "$ROOT/tests/mcp/loopback.mjs" \
  "$ROOT/tests/mcp/node_modules/@modelcontextprotocol/conformance/dist/index.js")
baseline="$ROOT/web/mcp/conformance/expected-failures.yml"
driver="node $ROOT/web/mcp/conformance/driver.mjs"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

if [ $# -gt 0 ]; then
  scenarios=("$@")
else
  mapfile -t scenarios < <("${suite[@]}" list --client | sed -n 's/^ *- \([^ ]*\).*/\1/p')
fi
[ "${#scenarios[@]}" -gt 0 ] || { echo "conformance: the suite listed no client scenario" >&2; exit 1; }

# The scenarios the baseline expects to fail (its `client:` list).
expected=$(sed -n '/^client:/,/^[a-z]/s/^ *- *\([^ #]*\).*/\1/p' "$baseline")

passed=0 failed=0 expected_failed=0 unexpected=0
for scenario in "${scenarios[@]}"; do
  log="$out/${scenario//\//_}.log"
  status=0
  "${suite[@]}" client --command "$driver" --scenario "$scenario" --timeout 30000 --expected-failures "$baseline" \
    -o "$out/results" >"$log" 2>&1 || status=$?
  if grep -q 'OVERALL: PASSED' "$log" && [ "$status" -eq 0 ]; then
    result=passed
  else
    result=failed
  fi
  is_expected=no
  if grep -qxF "$scenario" <<<"$expected"; then is_expected=yes; fi
  # The suite's own count of its checks, e.g. "Passed: 5/5, 0 failed, 1 warnings".
  checks=$(sed -e 's/\x1b\[[0-9;]*m//g' "$log" | sed -n 's/^Passed: \(.*\)$/\1/p' | tail -n 1)
  if [ "$result" = passed ] && [ "$is_expected" = no ]; then
    passed=$((passed + 1)); echo "ok - conformance $scenario: passed (checks: ${checks:-?})"
  elif [ "$result" = passed ]; then
    unexpected=$((unexpected + 1)); echo "not ok - conformance $scenario: passed, but the baseline still lists it (remove it)"
  elif [ "$is_expected" = yes ]; then
    expected_failed=$((expected_failed + 1)); echo "ok - conformance $scenario: failed, as the baseline expects (# reason in $(basename "$baseline"))"
  else
    failed=$((failed + 1)); unexpected=$((unexpected + 1)); echo "not ok - conformance $scenario: FAILED"
    sed -e 's/\x1b\[[0-9;]*m//g' "$log" | grep -E 'FAILURE|WARNING|Error|error|Passed:' | head -n 20 | sed 's/^/    /'
  fi
done
total=${#scenarios[@]}
echo "# conformance: $total client scenarios: $passed passed, $expected_failed failed as the baseline expects, $failed failed unexpectedly"
echo "# pass $passed"
echo "# fail $unexpected"
[ "$unexpected" -eq 0 ]
