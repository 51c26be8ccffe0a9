#!/usr/bin/env bash
# Spearman on the CPU: pairs per second of `fcbo-dist spearman` on
# zero-inflated count matrices (`gen counts`, 30 columns) of --sizes rows,
# for --threads, in two modes: --count-only (one pass: histogram and
# count) and --pvalue 1e-6 -o DIR (count pass, then the write pass); side
# by side, in the same run, scipy.stats.spearmanr and rankdata +
# numpy.corrcoef at --baseline-rows rows (they hold N x N matrices).  Also
# the load speed of the text parser (--check-input on a --load-rows file).
# Appends to bench/results/spearman-cpu.csv and spearman-load.csv.
#
#   bench/spearman.sh [--sizes "20000 50000 100000 200000"] [--threads "1 2"]
#                     [--baseline-rows 10000] [--load-rows 2000000] [--bin PATH]
#                     [--csv FILE] [--machine NAME]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist
SIZES="20000 50000 100000 200000"; THREADS="1 2"; BASE=10000; LOADROWS=2000000
CSV=$here/results/spearman-cpu.csv
MACHINE="$(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
bench_options 2,14 "--sizes=SIZES --threads=THREADS --baseline-rows=BASE --load-rows=LOADROWS --bin=BIN --csv=CSV --machine=MACHINE" "$@"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2)
[ -f "$CSV" ] || echo "tool,mode,rows,cols,pairs,threads,seconds,pairs_per_s,selected,machine,date,version" > "$CSV"
row() { echo "$1,$2,$3,30,$4,$5,$6,$7,$8,\"$MACHINE\",$(date +%F),$version" | tee -a "$CSV"; }

for N in $SIZES; do
  "$BIN" gen counts --rows "$N" --cols 30 --groups 50 --seed 1 -o "$tmp/m.npy"
  pairs=$((N * (N - 1) / 2))
  for t in $THREADS; do
    for mode in count-only p1e-6; do
      args=(--count-only); [ $mode = p1e-6 ] && args=(--pvalue 1e-6 -o "$tmp/out" --force)
      t0=$(date +%s.%N)
      "$BIN" spearman "$tmp/m.npy" "${args[@]}" -t "$t" 2> "$tmp/err"
      t1=$(date +%s.%N)
      sel=$(sed -n 's/^\([0-9]*\) of .*/\1/p' "$tmp/err")
      s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
      row fcbo-dist "$mode" "$N" "$pairs" "$t" "$s" "$(awk -v p="$pairs" -v s="$s" 'BEGIN{printf "%.4g", p / s}')" "$sel"
    done
  done
done

# The Python peers, and fcbo-dist, on the same baseline matrix.
"$BIN" gen counts --rows "$BASE" --cols 30 --groups 50 --seed 1 -o "$tmp/b.npy"
python3 "$here/spearman_baselines.py" "$tmp/b.npy" | while IFS=, read -r tool rows cols pairs secs rate; do
  mode=rho-and-p; [ "$tool" = scipy.stats.spearmanr ] || mode=rho-only
  row "$tool" "$mode" "$rows" "$pairs" 1 "$secs" "$rate" ""
done
for t in $THREADS; do
  t0=$(date +%s.%N); "$BIN" spearman "$tmp/b.npy" --count-only -t "$t" -q; t1=$(date +%s.%N)
  s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
  pairs=$((BASE * (BASE - 1) / 2))
  row fcbo-dist count-only "$BASE" "$pairs" "$t" "$s" "$(awk -v p="$pairs" -v s="$s" 'BEGIN{printf "%.4g", p / s}')" ""
done

# Loading: text in, ranks out (the best of 3).
"$BIN" gen counts --rows "$LOADROWS" --cols 30 --seed 2 -o "$tmp/load.txt"
bytes=$(stat -c %s "$tmp/load.txt")
best=
for r in 1 2 3; do
  s=$("$BIN" spearman "$tmp/load.txt" --check-input | sed -n 's/^read and ranked in \([0-9.]*\) s/\1/p')
  best=$(awk -v a="$best" -v b="$s" 'BEGIN{print (a == "" || b < a) ? b : a}')
done
LCSV=$(dirname "$CSV")/spearman-load.csv
[ -f "$LCSV" ] || echo "format,rows,cols,bytes,threads,seconds,bytes_per_s,machine,date,version" > "$LCSV"
echo "text,$LOADROWS,30,$bytes,$(nproc),$best,$(awk -v b="$bytes" -v s="$best" 'BEGIN{printf "%.4g", b / s}'),\"$MACHINE\",$(date +%F),$version" | tee -a "$LCSV"
