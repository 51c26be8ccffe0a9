#!/usr/bin/env bash
# Reading a spearman input: `fcbo-dist spearman FILE --check-input`, which
# reads, hashes and ranks the matrix and stops ("read and ranked in S s";
# --backend cpu, so that no CUDA context is created; rows up to the
# "hash-beside" ones timed CUDA builds, whose --check-input created one),
# on a zero-inflated count matrix of --rows x 30 (`gen counts --groups 50
# --seed 1`) as .npy (int32) and, with --text, as text.  Several binaries
# side by side in the same call (--bin PATH[:LABEL], repeatable: a build of
# another commit), alternating, the median of --reps runs each.  Appends
# to bench/results/spearman-read.csv.  --load times instead what a run
# waits for before its passes: the "load" of `--stats` in a --count-only
# run of the matrix against 100 rows of its own (`--y`, so that the pass
# is short), --backend cpu, -o to a scratch folder (checkpoints on, as
# by default); since the input's SHA-256 is joined at the commit, load no
# longer includes it.  Its rows are labelled LABEL(load).
#
#   bench/read-spearman.sh [--rows 9879896] [--reps 3] [--bin PATH[:LABEL]]... [--text] [--load] [--csv FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
ROWS=9879896; REPS=3; BINS=(); TEXT=0; LOAD=0; CSV=$here/results/spearman-read.csv
bench_options 2,17 "--rows=ROWS --reps=REPS --bin=BINS+ --text=TEXT! --load=LOAD! --csv=CSV" "$@"
[ ${#BINS[@]} -gt 0 ] || BINS=("$here/../build/fcbo-dist:build")
MACHINE="$(nproc) cores $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
first=${BINS[0]%%:*}
"$first" gen counts --rows "$ROWS" --cols 30 --groups 50 --seed 1 -o "$tmp/m.npy" || exit 1
files=("$tmp/m.npy")
[ $LOAD = 0 ] || "$first" gen counts --rows 100 --cols 30 --groups 50 --seed 2 -o "$tmp/y.npy" > /dev/null || exit 1
if [ $TEXT = 1 ]; then
  python3 -c "import numpy as np, sys; np.savetxt(sys.argv[2], np.load(sys.argv[1]), fmt='%d')" "$tmp/m.npy" "$tmp/m.txt" || exit 1
  files+=("$tmp/m.txt")
fi
[ -f "$CSV" ] || echo "binary,version,format,rows,cols,bytes,read_s,machine,date" > "$CSV"
for f in "${files[@]}"; do
  declare -A t=()
  for r in $(seq "$REPS"); do
    for b in "${BINS[@]}"; do
      bin=${b%%:*}
      if [ $LOAD = 1 ]; then
        s=$("$bin" spearman "$f" --y "$tmp/y.npy" --count-only --stats --backend cpu -o "$tmp/out" --force 2>&1 |
            sed -n 's/^load \([0-9.]*\) s, pass 1.*/\1/p')
      else
        s=$("$bin" spearman "$f" --check-input --backend cpu 2>&1 | sed -n 's/^read and ranked in \([0-9.]*\) s$/\1/p')
      fi
      [ -n "$s" ] || { echo "bench/read-spearman.sh: $bin gave no time on $f" >&2; exit 1; }
      t[$b]="${t[$b]:-} $s"
    done
  done
  for b in "${BINS[@]}"; do
    bin=${b%%:*}; label=${b#*:}; [ "$label" = "$b" ] && label=$(basename "$bin")
    [ $LOAD = 0 ] || label="$label(load)"
    med=$(printf '%s\n' ${t[$b]} | median)
    echo "$label,$("$bin" version | head -1 | cut -d' ' -f2),${f##*.},$ROWS,30,$(stat -c %s "$f"),$med,\"$MACHINE\",$(date -u +%F)" |
      tee -a "$CSV"
  done
  unset t
done
