#!/usr/bin/env bash
# What every run of the binary pays before and after its work: the wall
# time of `fcbo-dist version` (process start, the dynamic loader and the
# libraries' static initialisers, then exit), no GPU touched; or, with
# --cmd "ARGS", of `fcbo-dist ARGS` (a small GPU run, say, where making
# the device's context is part of the wall).  Several binaries side by
# side (--bin PATH[:LABEL], repeatable: a build of another commit),
# alternating, the median of --reps runs each, and the peak resident
# memory of one more run (GNU time's maximum RSS, in MB: what the
# program and its shared libraries take before any work).  Appends to
# bench/results/startup.csv.
#
#   bench/startup.sh [--reps 21] [--bin PATH[:LABEL]]... [--cmd "ARGS"] [--csv FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
REPS=21; BINS=(); CSV=$here/results/startup.csv; CMD=version
bench_options 2,13 "--reps=REPS --bin=BINS+ --csv=CSV --cmd=CMD" "$@"
[ ${#BINS[@]} -gt 0 ] || BINS=("$here/../build/fcbo-dist:build")
read -r -a ARGS <<< "$CMD"
gpu_machine
[ -x /usr/bin/time ] || { echo "bench/startup.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }
[ -f "$CSV" ] || echo "binary,version,seconds,machine,date,command,peak_mb" > "$CSV"
declare -A t=()
for b in "${BINS[@]}"; do
  "${b%%:*}" "${ARGS[@]}" > /dev/null 2> /tmp/startup.$$ ||
    { echo "bench/startup.sh: ${b%%:*} $CMD failed: $(tail -2 /tmp/startup.$$)" >&2; rm -f /tmp/startup.$$; exit 1; }
done
rm -f /tmp/startup.$$
for r in $(seq "$REPS"); do
  for b in "${BINS[@]}"; do
    t0=$(date +%s%N); "${b%%:*}" "${ARGS[@]}" > /dev/null 2>&1; t1=$(date +%s%N)
    t[$b]="${t[$b]:-} $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", (b - a) / 1e9}')"
  done
done
for b in "${BINS[@]}"; do
  bin=${b%%:*}; label=${b#*:}; [ "$label" = "$b" ] && label=$(basename "$bin")
  /usr/bin/time -f %M -o /tmp/startup.$$ "$bin" "${ARGS[@]}" > /dev/null 2>&1
  mb=$(awk '{ printf "%.1f", $1 / 1024 }' /tmp/startup.$$); rm -f /tmp/startup.$$
  echo "$label,$(bin_version "$bin"),$(printf '%s\n' ${t[$b]} | median),\"$MACHINE\",$(date -u +%F),\"$CMD\",$mb" |
    tee -a "$CSV"
done
