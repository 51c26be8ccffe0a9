#!/usr/bin/env bash
# What every run of the binary pays before and after its work: the wall
# time of `fcbo-dist version` (process start, the dynamic loader and the
# libraries' static initialisers, then exit), no GPU touched; or, with
# --cmd "ARGS", of `fcbo-dist ARGS` (a small GPU run, say, where making
# the device's context is part of the wall).  Several binaries side by
# side (--bin PATH[:LABEL], repeatable: a build of another commit),
# alternating, the median of --reps runs each, and the peak resident
# memory of one more run (GNU time's maximum RSS, in MB: what the
# program and its shared libraries take before any work).  --np N runs
# each under `mpirun --oversubscribe -np N` (the peak is then mpirun's
# largest child's).  Appends to bench/results/startup.csv.
#
#   bench/startup.sh [--reps 21] [--bin PATH[:LABEL]]... [--cmd "ARGS"] [--np 1] [--csv FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
REPS=21; BINS=(); CSV=$here/results/startup.csv; CMD=version; NP=1
bench_options 2,14 "--reps=REPS --bin=BINS+ --csv=CSV --cmd=CMD --np=NP" "$@"
[[ $NP =~ ^[0-9]+$ && $NP -ge 1 ]] || { echo "bench/startup.sh: --np wants a positive count, got '$NP'" >&2; exit 2; }
[ ${#BINS[@]} -gt 0 ] || BINS=("$here/../build/fcbo-dist:build")
read -r -a ARGS <<< "$CMD"
LAUNCH=()
if [ "$NP" -gt 1 ]; then LAUNCH=(mpirun --oversubscribe -np "$NP"); CMD="mpirun -np $NP fcbo-dist $CMD"; fi
gpu_machine
[ -x /usr/bin/time ] || { echo "bench/startup.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }
[ -f "$CSV" ] || echo "binary,version,seconds,machine,date,command,peak_mb" > "$CSV"
declare -A t=()
for b in "${BINS[@]}"; do
  "${LAUNCH[@]}" "${b%%:*}" "${ARGS[@]}" > /dev/null 2> /tmp/startup.$$ ||
    { echo "bench/startup.sh: ${b%%:*} $CMD failed: $(tail -2 /tmp/startup.$$)" >&2; rm -f /tmp/startup.$$; exit 1; }
done
rm -f /tmp/startup.$$
for r in $(seq "$REPS"); do
  for b in "${BINS[@]}"; do
    t0=$(date +%s%N); "${LAUNCH[@]}" "${b%%:*}" "${ARGS[@]}" > /dev/null 2>&1; t1=$(date +%s%N)
    t[$b]="${t[$b]:-} $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", (b - a) / 1e9}')"
  done
done
for b in "${BINS[@]}"; do
  bin=${b%%:*}; label=${b#*:}; [ "$label" = "$b" ] && label=$(basename "$bin")
  /usr/bin/time -f %M -o /tmp/startup.$$ "${LAUNCH[@]}" "$bin" "${ARGS[@]}" > /dev/null 2>&1
  mb=$(awk '{ printf "%.1f", $1 / 1024 }' /tmp/startup.$$); rm -f /tmp/startup.$$
  echo "$label,$(bin_version "$bin"),$(printf '%s\n' ${t[$b]} | median),\"$MACHINE\",$(date -u +%F),\"$CMD\",$mb" |
    tee -a "$CSV"
done
