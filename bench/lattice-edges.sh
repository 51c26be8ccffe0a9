#!/usr/bin/env bash
# What --edges costs: `fcbo-dist lattice FILE -o DIR` with and without
# --edges (default threads), whole-command wall seconds, on mushroom (or
# the FILEs given) from ../shared.  Appends to bench/results/lattice-edges.csv.
#
#   bench/lattice-edges.sh [--bin PATH] [--csv FILE] [--machine NAME] [FILE.dat ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; CSV=$here/results/lattice-edges.csv; files=()
MACHINE="$(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
bench_options 2,7 "--bin=BIN --csv=CSV --machine=MACHINE ARGS=files" "$@"
[ ${#files[@]} -gt 0 ] || files=("$here/../../shared/data/fca/mushroom.dat")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fcbo-edges.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2-)
[ -f "$CSV" ] || echo "input,edges,concepts,n_edges,seconds,machine,date,version" > "$CSV"
for f in "${files[@]}"; do
  for e in 0 1; do
    args=(); [ "$e" = 1 ] && args=(--edges)
    s=$(date +%s.%N)
    "$BIN" lattice "$f" -o "$tmp/o" --force -q "${args[@]}"
    t=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    read -r n m < <(python3 -c "import h5py, sys; f = h5py.File(sys.argv[1]); print(f.attrs['n_concepts'], f.attrs.get('n_edges', 0))" "$tmp/o/lattice.h5")
    echo "$(basename "$f"),$e,$n,$m,$t,\"$MACHINE\",$(date +%F),\"$version\"" | tee -a "$CSV"
  done
done
