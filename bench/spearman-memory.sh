#!/usr/bin/env bash
# Peak memory of `fcbo-dist spearman --pvalue 1e-6 -o DIR` against the
# number of rows: it should grow with N (the rank matrix, 2 bytes per
# value) and not with the N^2 pairs.  Appends to
# bench/results/spearman-memory.csv.
#
#   bench/spearman-memory.sh [--sizes "25000 50000 100000"] [--threads 2] [--bin PATH]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; SIZES="25000 50000 100000"; T=2
CSV=$here/results/spearman-memory.csv
MACHINE="$(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
bench_options 2,8 "--sizes=SIZES --threads=T --bin=BIN" "$@"
command -v /usr/bin/time > /dev/null || { echo "needs /usr/bin/time (Debian: apt-get install time)"; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
[ -f "$CSV" ] || echo "rows,cols,pairs,threads,max_rss_kb,seconds,machine,date,version" > "$CSV"
version=$("$BIN" version | head -1 | cut -d' ' -f2)
for N in $SIZES; do
  "$BIN" gen counts --rows "$N" --cols 30 --groups 50 --seed 1 -o "$tmp/m.npy"
  /usr/bin/time -f "%M %e" -o "$tmp/t" "$BIN" spearman "$tmp/m.npy" --pvalue 1e-6 -o "$tmp/out" --force -t "$T" -q
  read -r rss secs < "$tmp/t"
  echo "$N,30,$((N * (N - 1) / 2)),$T,$rss,$secs,\"$MACHINE\",$(date +%F),$version" | tee -a "$CSV"
done
