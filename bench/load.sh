#!/usr/bin/env bash
# Load speed: wall time to read a ~100 MB FIMI file (2.5 million objects,
# 1,000 attributes, density 0.01) with a minimum support that leaves no
# concepts, so the run is reading plus preparation.  Appends to
# bench/results/load.csv.   bench/load.sh [--bin PATH] [--reps 3]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; REPS=3; CSV=$here/results/load.csv
bench_options 2,5 "--bin=BIN --reps=REPS" "$@"
MACHINE="$(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$BIN" gen context --objects 2500000 --attributes 1000 --density 0.01 --seed 1 -o "$tmp/big.dat"
bytes=$(stat -c %s "$tmp/big.dat")
[ -f "$CSV" ] || echo "file_bytes,seconds,mb_per_s,machine,date" > "$CSV"
times=()
for r in $(seq "$REPS"); do
  t0=$(date +%s.%N); "$BIN" lattice "$tmp/big.dat" --min-support 3000000 -q -t 1; t1=$(date +%s.%N)
  times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')")
done
med=$(printf '%s\n' "${times[@]}" | median)
echo "$bytes bytes: $med s (median of $REPS)"
echo "$bytes,$med,$(awk -v b="$bytes" -v s="$med" 'BEGIN{printf "%.0f", b / s / 1e6}'),\"$MACHINE\",$(date -u +%F)" >> "$CSV"
