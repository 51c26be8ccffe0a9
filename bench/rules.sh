#!/usr/bin/env bash
# What `fcbo-dist rules` costs: the lattice of each FILE (mushroom from
# ../shared by default) with --edges at --min-support S (default 0: the
# full lattice, which the stem base needs to mean the context's), then the
# stem base and the Luxenburger basis at --min-confidence C (default 0.5)
# in two runs; the count and seconds of each from the summary line, and
# the whole command's wall seconds.  Appends to bench/results/rules.csv.
#
#   bench/rules.sh [--min-support S] [--min-confidence C] [--bin PATH] [--csv FILE] [FILE.dat ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=$here/../build/fcbo-dist; CSV=$here/results/rules.csv; files=(); S=0; C=0.5
source "$here/lib.sh"
bench_options 2,9 "--min-support=S --min-confidence=C --bin=BIN --csv=CSV ARGS=files" "$@"
[ ${#files[@]} -gt 0 ] || files=("$here/../../shared/data/fca/mushroom.dat")
gpu_machine
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fcbo-rules.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2-)
[ -f "$CSV" ] || echo "input,min_support,basis,min_confidence,concepts,count,seconds,wall_seconds,machine,date,version" > "$CSV"
for f in "${files[@]}"; do
  "$BIN" lattice "$f" -o "$tmp/l" --force -q --edges --min-support "$S" --backend cpu
  n=$(python3 -c "import h5py, sys; print(h5py.File(sys.argv[1]).attrs['n_concepts'])" "$tmp/l/lattice.h5")
  for basis in stem luxenburger; do
    s=$(date +%s.%N)
    line=$("$BIN" rules "$tmp/l" --basis "$basis" --min-confidence "$C" --force 2>&1 | tail -1)
    wall=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    count=$(echo "$line" | awk '{print $1}')
    secs=$(echo "$line" | sed -n 's/^[0-9]* [^(]*(\([0-9.]*\) s.*/\1/p')
    echo "$(basename "$f"),$S,$basis,$C,$n,$count,$secs,$wall,\"$MACHINE\",$(date -u +%F),\"$version\"" | tee -a "$CSV"
  done
done
