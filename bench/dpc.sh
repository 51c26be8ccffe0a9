#!/usr/bin/env bash
# Density peaks on the CPU: `fcbo-dist dpc` (cutoff kernel, d_c at 2%,
# --centers K) on the shared clustering sets (--sets; birch1 is 100,000
# 2-D points in 100 clusters), for --threads, each --reps times (median);
# side by side in the same run, the exact cKDTree peer
# (bench/dpc_ckdtree.py: the same d_c, the same order, every core) and
# the brute force over every pair (FD_DPC_GRID=off) at --brute-max points
# or fewer.  Seconds exclude reading the input for the peer, include it
# for fcbo-dist (--stats has the phases).  Appends to
# bench/results/dpc-cpu.csv.
#
#   bench/dpc.sh [--sets "aggregation:7 s1:15 birch1:100"] [--threads "1 2"] [--reps 3]
#                [--brute-max 100000] [--shared DIR] [--bin PATH] [--csv FILE] [--machine NAME]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; SHARED=$here/../../shared
SETS="aggregation:7 s1:15 birch1:100"; THREADS="1 2"; REPS=3; BRUTE=100000
CSV=$here/results/dpc-cpu.csv
MACHINE="$(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
bench_options 2,14 "--sets=SETS --threads=THREADS --reps=REPS --brute-max=BRUTE --shared=SHARED --bin=BIN --csv=CSV --machine=MACHINE" "$@"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2)
[ -f "$CSV" ] || echo "tool,set,points,clusters,threads,seconds,rho_s,delta_s,dc,machine,date,version" > "$CSV"
row() { echo "$1,$2,$3,$4,$5,$6,$7,$8,$9,\"$MACHINE\",$(date +%F),$version" | tee -a "$CSV"; }

for sk in $SETS; do
  set_=${sk%%:*}; K=${sk##*:}
  zcat "$SHARED/data/dpc/$set_.data.gz" > "$tmp/$set_.txt"
  n=$(wc -l < "$tmp/$set_.txt")
  for t in $THREADS; do
    for how in grid brute; do
      [ $how = brute ] && [ "$n" -gt "$BRUTE" ] && continue
      env=(); [ $how = brute ] && env=(FD_DPC_GRID=off)
      : > "$tmp/times"
      for r in $(seq "$REPS"); do
        t0=$(date +%s.%N)
        env "${env[@]}" "$BIN" dpc "$tmp/$set_.txt" --centers "$K" -t "$t" --stats -o "$tmp/out" --force 2> "$tmp/err"
        t1=$(date +%s.%N)
        awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f\n", b - a}' >> "$tmp/times"
      done
      rho=$(sed -n 's/.*rho \([0-9.]*\) s, delta.*/\1/p' "$tmp/err")
      delta=$(sed -n 's/.*delta \([0-9.]*\) s, centres.*/\1/p' "$tmp/err")
      dc=$(sed -n 's/.*d_c = \([0-9.e+]*\)).*/\1/p' "$tmp/err")
      row "fcbo-dist-$how" "$set_" "$n" "$K" "$t" "$(median < "$tmp/times")" "$rho" "$delta" "$dc"
    done
  done
  if python3 -c "import scipy" 2> /dev/null; then
    : > "$tmp/times"
    for r in $(seq "$REPS"); do
      python3 "$here/dpc_ckdtree.py" "$tmp/$set_.txt" "$dc" "$K" | cut -d' ' -f1 >> "$tmp/times"
    done
    row scipy-ckdtree "$set_" "$n" "$K" "$(nproc)" "$(median < "$tmp/times")" "" "" "$dc"
  fi
done
