#!/usr/bin/env bash
# What checkpoints cost: `lattice` and `spearman` with -o DIR, the same run
# with --checkpoint-seconds 0 (no checkpoints: parts written directly), the
# default 300 (a run this short commits each worker's segment once, at the
# end, and builds its part from the segments), and 1 (a commit a second
# a worker, as a long run would).  Wall seconds of the whole command
# (median of --reps), and the overhead against no checkpoints.  Appends to
# bench/results/checkpoint.csv.  --seconds gives other intervals (1e-9: a
# segment a record).  With --replace each run writes over the last run's
# result (--force), once with FD_WRITEBACK=on (the default: a segment of a
# run that replaces a result has its writeback started by a thread of its
# own, src/common/writeback.c) and once off, alternating; the input column
# says which, and the overhead is against the same switch's first interval.
#
#   bench/checkpoint.sh [--backend cpu|cuda] [--threads T] [--reps 3]
#                       [--objects 20000] [--attributes 120] [--density 0.12]
#                       [--rows 200000] [--seconds "0 300 1"] [--replace]
#                       [--bin PATH] [--csv FILE] [--machine NAME]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist
BACKEND=cpu; T=0; REPS=3; OBJ=20000; ATTR=120; DENS=0.12; ROWS=200000; SECONDS_LIST="0 300 1"; REPLACE=
CSV=$here/results/checkpoint.csv; SCRATCH=${TMPDIR:-/tmp}
MACHINE="$(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
bench_options 2,12 "--backend=BACKEND --threads=T --reps=REPS --objects=OBJ --attributes=ATTR --density=DENS --rows=ROWS --seconds=SECONDS_LIST --replace=REPLACE!1 --bin=BIN --csv=CSV --machine=MACHINE" "$@"
tmp=$(mktemp -d "$SCRATCH/fcbo-bench.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | sed "s/^fcbo-dist //") # "0.1.0 (commit ...)": quoted in the rows
targs=(); [ "$T" -gt 0 ] && targs=(-t "$T")
"$BIN" gen context --objects "$OBJ" --attributes "$ATTR" --density "$DENS" --seed 11 -o "$tmp/c.dat"
"$BIN" gen counts --rows "$ROWS" --cols 30 --groups 50 --seed 1 -o "$tmp/m.npy"
[ -f "$CSV" ] || echo "workload,input,backend,threads,checkpoint_seconds,seconds,overhead,output_bytes,machine,date,version" > "$CSV"

median() { sort -g | sed -n "$(( (REPS + 1) / 2 ))p"; }
# One run into $tmp/WORKLOAD (over the last one's result with --replace),
# its wall seconds; "rm -rf" only in this script's own scratch directory.
once() { # env-assignment workload checkpoint-seconds args...
  local e=$1 wl=$2 cs=$3 t0 t1; shift 3
  [ -n "$REPLACE" ] || rm -rf "${tmp:?}/$wl"
  t0=$(date +%s.%N)
  env "$e" "$BIN" "$wl" "$@" --backend "$BACKEND" "${targs[@]}" -o "$tmp/$wl" -q --force --checkpoint-seconds "$cs"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}
modes=(FD_BENCH_NONE=1); [ -n "$REPLACE" ] && modes=(FD_WRITEBACK=on FD_WRITEBACK=off)
for spec in "lattice|$tmp/c.dat|context ${OBJ}x${ATTR} density $DENS" \
            "spearman|$tmp/m.npy --pvalue 1e-6|counts ${ROWS}x30 p<=1e-6"; do
  IFS='|' read -r wl args what <<< "$spec"
  declare -A base=()
  for cs in $SECONDS_LIST; do
    # shellcheck disable=SC2086
    [ -n "$REPLACE" ] && once FD_BENCH_NONE=1 "$wl" "$cs" $args > /dev/null # a result to replace
    declare -A times=()
    for _ in $(seq "$REPS"); do
      for m in "${modes[@]}"; do
        # shellcheck disable=SC2086
        times[$m]+="$(once "$m" "$wl" "$cs" $args) "
      done
    done
    for m in "${modes[@]}"; do
      s=$(tr ' ' '\n' <<< "${times[$m]}" | grep . | median)
      [ -z "${base[$m]:-}" ] && base[$m]=$s
      bytes=$(du -sb "$tmp/$wl" | cut -f1)
      over=$(awk -v s="$s" -v b="${base[$m]}" 'BEGIN { print s / b - 1 }')
      label=$what; [ -n "$REPLACE" ] && label="$what; over the last result, $m"
      printf '%s,"%s",%s,%s,%s,%.3f,%.3f,%s,"%s",%s,"%s"\n' "$wl" "$label" "$BACKEND" "${T}" "$cs" "$s" "$over" "$bytes" \
        "$MACHINE" "$(date -u +%F)" "$version" | tee -a "$CSV"
    done
    unset times
  done
  unset base
done
