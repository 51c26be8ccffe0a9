#!/usr/bin/env bash
# The lattice's two layouts of the context on the CPU (src/lattice/fcbo.h):
# dense bitsets of rows and columns against lists only (sparse), one
# thread, on a sparse basket-like context (`gen context --zipf`), T10I4D100K
# and mushroom (from ../shared when present): wall seconds (median of
# --reps) and peak RSS of the whole command, and which layout `auto` takes.
# Appends to bench/results/lattice-layout.csv.
#
#   bench/lattice-layout.sh [--reps 3] [--bin PATH] [--shared DIR] [--csv FILE] [--machine NAME]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; REPS=3; SHARED=$here/../../shared; CSV=$here/results/lattice-layout.csv
MACHINE="$(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
bench_options 2,9 "--reps=REPS --bin=BIN --shared=SHARED --csv=CSV --machine=MACHINE" "$@"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fcbo-layout.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2-)
"$BIN" gen context --objects 100000 --attributes 16000 --density 0.0006 --zipf 1 --seed 1 -o "$tmp/zipf.dat" > /dev/null
[ -f "$CSV" ] || echo "input,min_support,layout,auto_layout,concepts,seconds,peak_rss_mb,machine,date,version" > "$CSV"
cases=("$tmp/zipf.dat|20|zipf 100000x16000 d=0.0006 A=1" "$tmp/zipf.dat|5|zipf 100000x16000 d=0.0006 A=1")
for f in T10I4D100K mushroom; do
  [ -f "$SHARED/data/fca/$f.dat" ] && cases+=("$SHARED/data/fca/$f.dat|0|$f")
done
for c in "${cases[@]}"; do
  IFS='|' read -r file sup name <<< "$c"
  auto=$("$BIN" lattice "$file" --min-support "$sup" -t 1 --stats 2>&1 > /dev/null | sed -n 's/.*layout \([a-z]*\)$/\1/p')
  for layout in dense sparse; do
    times=(); rss=0; concepts=
    for _ in $(seq "$REPS"); do
      out=$( { FD_LATTICE_LAYOUT=$layout /usr/bin/time -f "TIME %e %M" "$BIN" lattice "$file" --min-support "$sup" -t 1; } 2>&1 )
      times+=("$(echo "$out" | awk '/^TIME/ {print $2}')")
      rss=$(echo "$out" | awk '/^TIME/ {print int($3 / 1024)}')
      concepts=$(echo "$out" | awk '/concepts in/ {print $1}')
    done
    med=$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(( (REPS + 1) / 2 ))p")
    echo "\"$name\",$sup,$layout,$auto,$concepts,$med,$rss,\"$MACHINE\",$(date +%F),\"$version\"" | tee -a "$CSV"
  done
done
