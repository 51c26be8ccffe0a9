#!/usr/bin/env bash
# spearman --missing pairwise against pandas' DataFrame.corr(method=
# "spearman") (pairwise complete observations, the same definition) on
# --vars variables of --obs observations with a --nan fraction of the
# values missing: wall seconds of each whole command (pandas: reading the
# .npy and corr; fcbo-dist: reading, every pair's rho and p written with
# --rho 0), and the largest |rho| difference between them.  Appends to
# bench/results/spearman-pandas.csv.
#
#   bench/spearman-pandas.sh [--vars "500 2000"] [--obs 30] [--nan 0.1] [--threads T] [--bin PATH] [--csv FILE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=$here/../build/fcbo-dist; CSV=$here/results/spearman-pandas.csv
VARS="500 2000"; OBS=30; NAN=0.1; THREADS=$(nproc)
source "$here/lib.sh"
bench_options 2,10 "--vars=VARS --obs=OBS --nan=NAN --threads=THREADS --bin=BIN --csv=CSV" "$@"
python3 -c "import pandas" 2> /dev/null || { echo "bench/spearman-pandas.sh: pandas is not installed" >&2; exit 2; }
gpu_machine
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fcbo-pandas.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2-)
pv=$(python3 -c "import pandas; print(pandas.__version__)")
[ -f "$CSV" ] || echo "vars,obs,nan,pairs,threads,fcbo_seconds,pandas_seconds,max_rho_diff,pandas,machine,date,version" > "$CSV"
for v in $VARS; do
  python3 -c "import numpy as np, sys
r = np.random.default_rng(5); x = r.integers(0, 20, size=(int(sys.argv[1]), int(sys.argv[2]))).astype(float)
x[r.random(x.shape) < float(sys.argv[3])] = np.nan; np.save(sys.argv[4], x)" "$v" "$OBS" "$NAN" "$tmp/x.npy"
  s=$(date +%s.%N)
  "$BIN" spearman "$tmp/x.npy" --missing pairwise --rho 0 -t "$THREADS" -o "$tmp/o" --force -q
  ours=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
  row=$(python3 - "$tmp/x.npy" "$tmp/o/spearman.h5" <<'PY'
import sys, time
import h5py
import numpy as np
import pandas as pd
t0 = time.time()
x = np.load(sys.argv[1])
c = pd.DataFrame(x.T).corr(method="spearman", min_periods=3).to_numpy()
secs = time.time() - t0
with h5py.File(sys.argv[2]) as f:
    i, j, rho = f["pairs/i"][:], f["pairs/j"][:], f["pairs/rho"][:]
print("%d,%.3f,%.2g" % (len(i), secs, np.abs(c[i, j] - rho).max() if len(i) else 0))
PY
)
  pairs=${row%%,*}; rest=${row#*,}
  echo "$v,$OBS,$NAN,$pairs,$THREADS,$ours,$rest,$pv,\"$MACHINE\",$(date -u +%F),\"$version\"" | tee -a "$CSV"
done
