#!/usr/bin/env bash
# Extents as lists or bitsets on the GPU, and bitsets closed by rows or by
# columns: `lattice --backend cuda --stats` on one GPU with FD_GPU_BITS_MIN
# and FD_GPU_CLOSURE set per variant (docs/performance.md, tuning knobs).
# Prints, per data set and variant, the median enumeration time of --reps
# runs, the closures and how many of them were by columns, and the deepest
# stack in extent words.  Results: bench/results/lattice-gpu-extents.txt.
#
#   bench/gpu-lattice-extents.sh [--bin PATH] [--shared DIR] [--reps 3]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
# The GPU's own work is measured: a lone GPU rank's threads would begin
# the search while the GPU starts (FD_GPU_HOST_START, on by default).
export FD_GPU_HOST_START=off
BIN=$here/../build/fcbo-dist; SHARED=$here/../../shared; REPS=3
bench_options 2,9 "--bin=BIN --shared=SHARED --reps=REPS" "$@"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$BIN" gen context --objects 68000 --attributes 412 --density 0.11 --seed 1 -o "$tmp/s68k.dat"
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F), $("$BIN" version | head -1)"
D=$SHARED/data/fca
for a in "$D/mushroom.dat" "$D/T10I4D100K.dat" "$D/chess.dat --min-support 816" "$D/chess.dat --min-support 400" \
         "$tmp/s68k.dat --min-support 68"; do
  for v in "FD_GPU_BITS_MIN=off" "FD_GPU_CLOSURE=auto" "FD_GPU_CLOSURE=rows" "FD_GPU_CLOSURE=columns"; do
    es=()
    for r in $(seq "$REPS"); do
      env $v FD_GPU_VERBOSE=1 timeout 120 "$BIN" lattice $a --backend cuda --stats 2> "$tmp/err" > /dev/null ||
        { echo "failed: $a $v: $(tail -2 "$tmp/err")"; continue 2; }
      es+=("$(sed -n 's/.*enumeration \([0-9.]*\) s.*/\1/p' "$tmp/err")")
    done
    e=$(printf '%s\n' "${es[@]}" | median)
    g=$(grep '^gpu ' "$tmp/err" | sed 's/.*stack at most \([0-9]*\) nodes and \([0-9]*\) extent words; \([0-9]*\) closures, \([0-9]*\) by columns.*/stack \1 nodes \2 words, \3 closures, \4 by columns/')
    printf "%-34s %-22s enum %8.4f s  %s\n" "$(basename "${a%% *}")${a#"${a%% *}"}" "$v" "$e" "$g"
  done
done
