#!/usr/bin/env bash
# `npm test` on a busy machine (issue 29): the suite with busy processes beside it, each a
# `yes > /dev/null` that takes a core for itself, all stopped when the suite ends. The tests
# are budgeted by work (packets, descriptions, steps) and wait for events, not for time, so
# they pass here as on a quiet machine, only slower. Prints the load average before and after,
# the time and the result; exits with npm test's status.
#
#   scripts/test-under-load.sh                  # two busy processes
#   BUSY=0 scripts/test-under-load.sh           # none: the same figures, quiet
#   scripts/test-under-load.sh --cold           # an empty p4c cache (as a fresh machine has)
#   scripts/test-under-load.sh -- test/p4       # arguments after -- go to vitest
#
# --cold runs with TMPDIR a new directory (removed at the end), so that every program p4c
# compiles is compiled again ($TMPDIR/strata-p4c-cache is empty); otherwise the cache is the
# one the machine has. The P4 tests run where STRATA_P4TOOLS finds the toolchain (.ci/run sets it).

set -uo pipefail
cd "$(dirname "$0")/.."

BUSY=${BUSY:-2}
cold=false
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --cold) cold=true ;;
    --) shift; args=("$@"); break ;;
    *) echo "test-under-load: unknown option $1 (--cold, or -- then vitest's arguments)" >&2; exit 2 ;;
  esac
  shift
done
[[ $BUSY =~ ^[0-9]+$ ]] || { echo "test-under-load: BUSY=$BUSY is not a whole number" >&2; exit 2; }

busy_pids=()
cold_dir=""
cleanup() {
  for pid in "${busy_pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${busy_pids[@]}"; do wait "$pid" 2>/dev/null; done
  busy_pids=()
  if [[ -n $cold_dir ]]; then rm -rf "$cold_dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if $cold; then
  cold_dir=$(mktemp -d -t strata-cold-XXXXXX)
  export TMPDIR=$cold_dir
fi

load() { cut -d' ' -f1-3 /proc/loadavg; }

for ((i = 0; i < BUSY; i++)); do
  yes >/dev/null &
  busy_pids+=($!)
done
cache=$($cold && echo "cold p4c cache" || echo "p4c cache as it was")
echo "test-under-load: npm test beside $BUSY busy processes, $cache, on $(nproc) cores; load average $(load)"

start=$(date +%s.%N)
npm test -- "${args[@]}"
status=$?
end=$(date +%s.%N)
after=$(load)
cleanup

seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }')
result=$([[ $status -eq 0 ]] && echo "passed" || echo "FAILED (exit $status)")
echo "test-under-load: npm test $result in ${seconds} s beside $BUSY busy processes, $cache; load average at the end $after"
exit $status
