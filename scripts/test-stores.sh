#!/usr/bin/env bash
# The whole suite on each store (docs/decisions.md D12): on
# SQLite, then on PostgreSQL, a throwaway cluster that test/globalSetup.ts
# starts and removes. The second run happens even when the first fails; the
# script fails when either does, and ends with each run's summary line.
# Arguments go to both vitest runs (e.g. a file to run on both stores).
set -uo pipefail
cd "$(dirname "$0")/.."

status=0
summaries=()
for store in sqlite postgres; do
  echo "=== the suite on ${store} (HOOKRELAY_TEST_DATABASE=${store}) ==="
  log=$(mktemp)
  HOOKRELAY_TEST_DATABASE=${store} bun --bun vitest run "$@" 2>&1 | tee "$log"
  code=${PIPESTATUS[0]}
  [ "$code" -eq 0 ] || status=1
  line=$(grep -aE '^tests: [0-9]+ passed' "$log" | tail -1)
  summaries+=("${line:-tests on ${store}: no summary (vitest exited ${code} before the end of the run)}")
  rm -f "$log"
done
echo
printf '%s\n' "${summaries[@]}"
exit $status
