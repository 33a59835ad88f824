#!/usr/bin/env bash
# `npm run test:loaded [-- N]`: the README's test command (`npm test`: the
# whole suite on SQLite, then on a throwaway PostgreSQL) while something else
# keeps one of the two cores busy (`stress-ng --cpu 1`), N times in a row
# (default 3), as a machine shared with other work runs it. Prints each run's
# summary lines and how long it took, and fails when any run failed. The
# tests must pass like this: see docs/testing.md.
#
# stress-ng is Debian's package: apt-get install -y --no-install-recommends stress-ng
set -uo pipefail
cd "$(dirname "$0")/.."

runs=${1:-3}
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: npm run test:loaded [-- RUNS]   (RUNS: how many times in a row, default 3)" >&2
  exit 2
fi
if ! command -v stress-ng >/dev/null 2>&1; then
  echo "error: stress-ng is missing; install it with: sudo apt-get install -y --no-install-recommends stress-ng" >&2
  exit 1
fi

stress_pid=""
stop_stress() {
  if [ -n "$stress_pid" ]; then
    kill "$stress_pid" 2>/dev/null
    wait "$stress_pid" 2>/dev/null
    stress_pid=""
  fi
}
trap stop_stress EXIT
trap 'exit 130' INT TERM

# One CPU hog for the whole series, started before the first run.
stress-ng --cpu 1 --quiet &
stress_pid=$!

status=0
report=()
for ((run = 1; run <= runs; run++)); do
  echo "=== loaded run ${run} of ${runs} (stress-ng --cpu 1 beside it) ==="
  log=$(mktemp)
  started=$(date +%s)
  npm test 2>&1 | tee "$log"
  code=${PIPESTATUS[0]}
  seconds=$(($(date +%s) - started))
  [ "$code" -eq 0 ] || status=1
  # scripts/test-stores.sh ends with one summary line per store (or says why one is missing).
  lines=$(grep -aE '^tests: |^tests on [a-z]+: ' "$log" | tail -2 | sed 's/^/  /')
  report+=("run ${run}: exit ${code}, ${seconds} s"$'\n'"${lines:-  (no summary: npm test stopped before a run ended)}")
  rm -f "$log"
done

stop_stress
echo
echo "=== ${runs} loaded run(s) ==="
printf '%s\n' "${report[@]}"
exit $status
