#!/usr/bin/env bash
# Density peaks' phases at scale on the CPU: `fcbo-dist dpc` on `gen blobs
# --n N --dims 2 --clusters 50 --seed 7` (.npy, --neighbors 30, -t
# THREADS, --stats) with each binary of --bin LABEL=PATH (repeatable: a
# build of an older commit beside this one; default this build's), --reps
# rounds that take the binaries in turn.  The phases are the result's
# attributes; wall_s is the whole command, peak_mb its peak RSS (GNU
# time).  Appends to bench/results/dpc-phases.csv.
#
#   bench/dpc-phases.sh [--n 10000000] [--threads 2] [--reps 1] [--bin LABEL=PATH]... [--csv FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
N=10000000; THREADS=2; REPS=1; BINS=(); CSV=$here/results/dpc-phases.csv
bench_options 2,10 "--n=N --threads=THREADS --reps=REPS --bin=BINS+ --csv=CSV" "$@"
[ ${#BINS[@]} -gt 0 ] || BINS=("this=$here/../build/fcbo-dist")
[ -x /usr/bin/time ] || { echo "bench/dpc-phases.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }
gpu_machine
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
first=${BINS[0]#*=}
"$first" gen blobs --n "$N" --dims 2 --clusters 50 --seed 7 -o "$tmp/p.npy" > /dev/null || exit 1
[ -f "$CSV" ] || echo "points,threads,label,load_s,dc_s,rho_s,delta_s,assign_s,wall_s,peak_mb,clusters,machine,date,version" > "$CSV"
for ((r = 0; r < REPS; r++)); do
  for b in "${BINS[@]}"; do
    label=${b%%=*} bin=${b#*=}
    t0=$(date +%s.%N)
    /usr/bin/time -f %M -o "$tmp/rss" "$bin" dpc "$tmp/p.npy" --neighbors 30 -t "$THREADS" --stats -o "$tmp/o" --force \
      > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; continue; }
    t1=$(date +%s.%N)
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    IFS=, read -r load dc rho delta assign clusters _ <<< "$(dpc_phases "$tmp/o/dpc.h5")"
    mb=$(awk '{ printf "%.0f", $1 / 1024 }' "$tmp/rss")
    echo "$N,$THREADS,$label,$load,$dc,$rho,$delta,$assign,$wall,$mb,$clusters,\"$MACHINE\",$(date +%F),$(bin_version "$bin")" |
      tee -a "$CSV"
  done
done
