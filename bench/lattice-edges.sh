#!/usr/bin/env bash
# What --edges costs: `fcbo-dist lattice FILE -o DIR` with and without
# --edges, whole-command wall seconds and the covers' own (the summary's
# "covering pairs ... in S s", rank 0's), on mushroom and T10I4D100K at
# min support 100 (or the FILEs given, at --min-support S), on --ranks P
# (mpirun) and --threads T each (default: all cores, on one rank).
# FD_EDGES_PASS set in the environment forces a pass; the pass column
# says which (or --label L: another build's run) and the pass taken, as
# the summary says it.  Appends to
# bench/results/lattice-edges.csv.
#
#   bench/lattice-edges.sh [--bin PATH] [--csv FILE] [--machine NAME] [--min-support S]
#                          [--ranks P] [--threads T] [--label L] [--passes "auto rows columns down"]
#                          [FILE.dat ...]
# --passes: each FD_EDGES_PASS in turn (the run without --edges once),
# to check the choice that auto makes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; CSV=$here/results/lattice-edges.csv; files=(); MS=""; RANKS=1; THREADS=0; LABEL=""; PASSES=""
MACHINE="$(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
bench_options 2,15 "--bin=BIN --csv=CSV --machine=MACHINE --min-support=MS --ranks=RANKS --threads=THREADS --label=LABEL --passes=PASSES ARGS=files" "$@"
data=$here/../../shared/data/fca
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fcbo-edges.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2-)
header="input,min_support,ranks,threads,edges,concepts,n_edges,seconds,edges_seconds,pass,machine,date,version"
[ -f "$CSV" ] || echo "$header" > "$CSV"
run() { # FILE MINSUPPORT
  local f=$1 ms=$2 e s t es n m runs=(0 1) pass
  if [ -n "$PASSES" ]; then runs=(0); for pass in $PASSES; do runs+=("1:$pass"); done; fi
  for e in "${runs[@]}"; do
    pass=${e#1:}; [ "$pass" = "$e" ] && pass=${FD_EDGES_PASS:-}
    e=${e%%:*}
    args=(lattice "$f" -o "$tmp/o" --force --min-support "$ms")
    [ "$THREADS" = 0 ] || args+=(-t "$THREADS")
    [ "$e" = 1 ] && args+=(--edges)
    launch=(); [ "$RANKS" = 1 ] || launch=(mpirun -np "$RANKS")
    s=$(date +%s.%N)
    if [ -n "$pass" ]; then FD_EDGES_PASS=$pass "${launch[@]}" "$BIN" "${args[@]}" 2> "$tmp/err"
    else "${launch[@]}" "$BIN" "${args[@]}" 2> "$tmp/err"; fi
    t=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    es=$(sed -n 's/^[0-9]* covering pairs (--edges) in \([0-9.]*\) s.*/\1/p' "$tmp/err")
    taken=$(sed -n 's/^[0-9]* covering pairs (--edges) in .*, pass \(down\|up\).*/\1/p' "$tmp/err")
    rows=$(sed -n 's/.*; \([0-9]*\) of \([0-9]*\) concepts.* by rows.*/\1 of \2 by rows/p' "$tmp/err")
    [ -z "$rows" ] || taken="$taken: $rows"
    read -r n m < <(python3 -c "import h5py, sys; f = h5py.File(sys.argv[1]); print(f.attrs['n_concepts'], f.attrs.get('n_edges', 0))" "$tmp/o/lattice.h5")
    echo "$(basename "$f"),$ms,$RANKS,$THREADS,$e,$n,$m,$t,$es,\"${LABEL:-${pass:-auto}}${taken:+ ($taken)}\",\"$MACHINE\",$(date +%F),\"$version\"" | tee -a "$CSV"
  done
}
if [ ${#files[@]} -gt 0 ]; then
  for f in "${files[@]}"; do run "$f" "${MS:-0}"; done
else
  run "$data/mushroom.dat" "${MS:-0}"
  run "$data/T10I4D100K.dat" "${MS:-100}"
fi
