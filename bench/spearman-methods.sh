#!/usr/bin/env bash
# Throughput of spearman's methods side by side: Spearman (complete),
# Spearman with --missing drop (NaN in the first observation of 10 rows:
# that observation goes, the whole matrix is read first), --missing
# pairwise on the same matrix (missing-pairwise: 10 incomplete rows) and
# with a NaN in 1% of the rows (missing-pairwise-1pct) and in every row
# (missing-pairwise-all: the re-ranking's own rate; each pair with an
# incomplete row is re-ranked, on the CUDA backend by its own kernel),
# missing-pairwise-1pct with --fdr 0.05 instead (missing-pairwise-fdr:
# the complete rows' pairs binned by x on either backend, the others by
# their own p on the host), Kendall's tau-b with --pvalue 1e-6 instead (kendall-pvalue: each pair's
# p; on the CUDA backend by the wide kernel) and with --fdr 0.05
# (kendall-fdr: its pass 1 bins each pair's p, then the cutoff), and
# Kendall's tau-b (--method kendall: past 16 observations the GPU's wide
# kernel), on `gen counts` matrices of --rows rows and each of --cols
# observations, --count-only --rho 0.9, on each of --backends;
# pairs/s from the summary line (--methods: a subset, by these names).
# Appends to bench/results/spearman-methods.csv.
#
#   bench/spearman-methods.sh [--rows 100000] [--cols "16 30"] [--backends "cpu cuda"] [--methods "..."]
#                             [--bin PATH] [--csv FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; ROWS=100000; COLS="16 30"; BACKENDS="cpu cuda"
METHODS="spearman missing-drop missing-pairwise missing-pairwise-1pct missing-pairwise-all missing-pairwise-fdr kendall kendall-pvalue kendall-fdr"
CSV=$here/results/spearman-methods.csv
bench_options 2,19 "--rows=ROWS --cols=COLS --backends=BACKENDS --methods=METHODS --bin=BIN --csv=CSV" "$@"
gpu_machine
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
version=$(bin_version "$BIN")
[ -f "$CSV" ] || echo "rows,cols,method,backend,pairs,seconds,pairs_per_s,machine,date,version" > "$CSV"
for c in $COLS; do
  "$BIN" gen counts --rows "$ROWS" --cols "$c" --groups 50 --seed 3 -o "$tmp/m.npy" > /dev/null || exit 1
  python3 -c "import numpy as np, sys; x = np.load(sys.argv[1]).astype(float); r = np.random.default_rng(1)
x[r.integers(0, len(x), 10), 0] = np.nan; np.save(sys.argv[2], x)
x[r.random(len(x)) < 0.01, 1] = np.nan; np.save(sys.argv[3], x)
x[np.arange(len(x)), r.integers(0, x.shape[1], len(x))] = np.nan; np.save(sys.argv[4], x)" \
    "$tmp/m.npy" "$tmp/nan.npy" "$tmp/nan1.npy" "$tmp/nanall.npy" || exit 1
  for method in $METHODS; do
    args=("$tmp/m.npy"); sel=(--rho 0.9); case $method in
      spearman) ;;
      missing-drop) args=("$tmp/nan.npy" --missing drop);;
      missing-pairwise) args=("$tmp/nan.npy" --missing pairwise);;
      missing-pairwise-1pct) args=("$tmp/nan1.npy" --missing pairwise);;
      missing-pairwise-all) args=("$tmp/nanall.npy" --missing pairwise);;
      missing-pairwise-fdr) args=("$tmp/nan1.npy" --missing pairwise); sel=(--fdr 0.05);;
      kendall) args=("$tmp/m.npy" --method kendall);;
      kendall-pvalue) args=("$tmp/m.npy" --method kendall); sel=(--pvalue 1e-6);;
      kendall-fdr) args=("$tmp/m.npy" --method kendall); sel=(--fdr 0.05);;
      *) echo "bench/spearman-methods.sh: unknown method $method" >&2; exit 2;;
    esac
    for be in $BACKENDS; do
      line=$("$BIN" spearman "${args[@]}" --count-only "${sel[@]}" --backend "$be" 2>&1 | grep "pairs selected")
      [ -n "$line" ] || { echo "bench/spearman-methods.sh: $method on $be failed" >&2; continue; }
      pairs=$(echo "$line" | awk '{print $3}'); secs=$(echo "$line" | sed -n 's/.* in \([0-9.]*\) s .*/\1/p')
      rate=$(awk -v p="$pairs" -v s="$secs" 'BEGIN { printf "%.3g", p / s }')
      echo "$ROWS,$c,$method,$be,$pairs,$secs,$rate,\"$MACHINE\",$(date -u +%F),$version" | tee -a "$CSV"
    done
  done
done
