#!/usr/bin/env bash
# Lattice benchmark: wall time of `fcbo-dist lattice` writing intents to
# HDF5, median of --reps runs, on the shared FIMI data sets and synthetic
# contexts.  Appends rows to bench/results/lattice-cpu.csv.
#
#   bench/lattice.sh [--bin PATH] [--threads "1 2"] [--reps 3] [--sets "mushroom t10 chess1350 chess816 synth"]
#                    [--shared ../shared] [--csv FILE] [--machine NAME]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist
THREADS="1 2"; REPS=3; SETS="mushroom t10 chess1350 chess816 synth"
SHARED=$here/../../shared; CSV=$here/results/lattice-cpu.csv
MACHINE="$(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
bench_options 2,8 "--bin=BIN --threads=THREADS --reps=REPS --sets=SETS --shared=SHARED --csv=CSV --machine=MACHINE" "$@"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
[ -f "$CSV" ] || echo "dataset,objects,attributes,density,min_support,concepts,threads,seconds,concepts_per_s,machine,date,version" > "$CSV"
version=$("$BIN" version | head -1 | cut -d' ' -f2)

# name file min_support
run_set() {
  local name=$1 file=$2 ms=$3
  [ -e "$file" ] || { echo "skip $name: $file absent" >&2; return; }
  set -- $(context_shape "$file")
  for t in $THREADS; do
    local times=() concepts=0
    for r in $(seq "$REPS"); do
      rm -rf "$tmp/out"
      local t0 t1; t0=$(date +%s.%N)
      "$BIN" lattice "$file" -o "$tmp/out" -q -t "$t" --min-support "$ms"
      t1=$(date +%s.%N)
      times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", b - a}')")
      concepts=$("$BIN" info "$tmp/out/lattice.h5" | awk '$1=="n_concepts"{print $2}')
    done
    local med; med=$(printf '%s\n' "${times[@]}" | median)
    local rate; rate=$(awk -v c="$concepts" -v s="$med" 'BEGIN{printf "%.0f", c / s}')
    printf '%-12s %9d x %-5d ms %-5s t %-3s %10d concepts %8.3f s %10d concepts/s\n' "$name" "$1" "$2" "$ms" "$t" "$concepts" "$med" "$rate"
    echo "$name,$1,$2,$3,$ms,$concepts,$t,$med,$rate,\"$MACHINE\",$(date -u +%F),$version" >> "$CSV"
  done
}

for s in $SETS; do
  case $s in
    mushroom) run_set mushroom "$SHARED/data/fca/mushroom.dat" 0;;
    t10) run_set T10I4D100K "$SHARED/data/fca/T10I4D100K.dat" 0;;
    chess1350) run_set chess "$SHARED/data/fca/chess.dat" 1350;;
    chess816) run_set chess "$SHARED/data/fca/chess.dat" 816;;
    synth)
      "$BIN" gen context --objects 20000 --attributes 100 --density 0.1 --seed 1 -o "$tmp/u.dat"
      run_set synth-uniform "$tmp/u.dat" 0
      "$BIN" gen context --objects 20000 --attributes 200 --density 0.05 --zipf 1 --seed 1 -o "$tmp/z.dat"
      run_set synth-zipf "$tmp/z.dat" 0;;
    *) echo "unknown set $s" >&2; exit 2;;
  esac
done
