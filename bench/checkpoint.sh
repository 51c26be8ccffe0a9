#!/usr/bin/env bash
# What checkpoints cost: `lattice` and `spearman` with -o DIR, the same run
# with --checkpoint-seconds 0 (no checkpoints: parts written directly), the
# default 300 (a run this short commits each worker's segment once, at the
# end, and builds its part from the segments), and 1 (a commit a second
# a worker, as a long run would).  Wall seconds of the whole command
# (median of --reps), and the overhead against no checkpoints.  Appends to
# bench/results/checkpoint.csv.
#
#   bench/checkpoint.sh [--backend cpu|cuda] [--threads T] [--reps 3]
#                       [--objects 20000] [--attributes 120] [--density 0.12]
#                       [--rows 200000] [--bin PATH] [--csv FILE] [--machine NAME]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist
BACKEND=cpu; T=0; REPS=3; OBJ=20000; ATTR=120; DENS=0.12; ROWS=200000
CSV=$here/results/checkpoint.csv; SCRATCH=${TMPDIR:-/tmp}
MACHINE="$(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
bench_options 2,12 "--backend=BACKEND --threads=T --reps=REPS --objects=OBJ --attributes=ATTR --density=DENS --rows=ROWS --bin=BIN --csv=CSV --machine=MACHINE" "$@"
tmp=$(mktemp -d "$SCRATCH/fcbo-bench.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2)
targs=(); [ "$T" -gt 0 ] && targs=(-t "$T")
"$BIN" gen context --objects "$OBJ" --attributes "$ATTR" --density "$DENS" --seed 11 -o "$tmp/c.dat"
"$BIN" gen counts --rows "$ROWS" --cols 30 --groups 50 --seed 1 -o "$tmp/m.npy"
[ -f "$CSV" ] || echo "workload,input,backend,threads,checkpoint_seconds,seconds,overhead,output_bytes,machine,date,version" > "$CSV"

median() { sort -g | sed -n "$(( (REPS + 1) / 2 ))p"; }
run() { # workload checkpoint-seconds args...
  local wl=$1 cs=$2; shift 2
  for _ in $(seq "$REPS"); do
    rm -rf "$tmp/out"
    local t0 t1
    t0=$(date +%s.%N)
    "$BIN" "$wl" "$@" --backend "$BACKEND" "${targs[@]}" -o "$tmp/out" -q --checkpoint-seconds "$cs"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
  done | median
}
for spec in "lattice|$tmp/c.dat|context ${OBJ}x${ATTR} density $DENS" \
            "spearman|$tmp/m.npy --pvalue 1e-6|counts ${ROWS}x30 p<=1e-6"; do
  IFS='|' read -r wl args what <<< "$spec"
  base=
  for cs in 0 300 1; do
    # shellcheck disable=SC2086
    s=$(run "$wl" "$cs" $args)
    [ -z "$base" ] && base=$s
    bytes=$(du -sb "$tmp/out" | cut -f1)
    over=$(awk -v s="$s" -v b="$base" 'BEGIN { print s / b - 1 }')
    printf '%s,"%s",%s,%s,%s,%.3f,%.3f,%s,"%s",%s,%s\n' "$wl" "$what" "$BACKEND" "${T}" "$cs" "$s" "$over" "$bytes" \
      "$MACHINE" "$(date -u +%F)" "$version" | tee -a "$CSV"
  done
done
