#!/usr/bin/env bash
# How long rank 0 takes to split the top of the tree on the host before
# other ranks get work (the serial start of every distributed lattice run,
# CPU or GPU): `mpirun -np 2 fcbo-dist lattice --backend cpu -t 1 --stats`,
# the "splitting the tree" seconds of rank 0, median of --reps, on
# T10I4D100K (100,000 x 870, sparse) and synth-68k (68,000 x 412, density
# 0.11) at support 68.  Prints one line per data set; results in
# bench/results/lattice-split-host.txt.
#
#   bench/lattice-split-host.sh [--bin PATH] [--shared DIR] [--reps 5]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; SHARED=$here/../../shared; REPS=5
bench_options 2,10 "--bin=BIN --shared=SHARED --reps=REPS" "$@"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$BIN" gen context --objects 68000 --attributes 412 --density 0.11 --seed 1 -o "$tmp/s68k.dat"
for a in "$SHARED/data/fca/T10I4D100K.dat" "$tmp/s68k.dat --min-support 68"; do
  s=()
  for r in $(seq "$REPS"); do
    s+=("$(mpirun --oversubscribe -np 2 "$BIN" lattice $a --backend cpu -t 1 --stats 2>&1 < /dev/null |
           sed -n 's/.*enumeration .* of which \([0-9.]*\) s splitting.*/\1/p')")
  done
  printf '%-40s split %.4f s (median of %d)\n' "$(basename "${a%% *}")${a#"${a%% *}"}" "$(printf '%s\n' "${s[@]}" | median)" "$REPS"
done
