#!/usr/bin/env bash
# dpc's two automatic centre rules side by side (--auto-centers gap, the
# default, and outliers): on `gen blobs` data sets (one blob, touching
# blobs, separate blobs in 2 and 10 dimensions, one wide blob as noise),
# the clusters each rule finds, the ARI of each against the true labels,
# the outlier rule's z and the scores (log gamma - median) / robust sd of
# its weakest centre and of the strongest point it left out.  Appends to
# bench/results/dpc-centers.csv.
#
#   bench/dpc-centers.sh [--bin PATH] [--csv FILE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=$here/../build/fcbo-dist; CSV=$here/results/dpc-centers.csv
source "$here/lib.sh"
bench_options 2,10 "--bin=BIN --csv=CSV" "$@"
gpu_machine
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fcbo-centers.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2-)
[ -f "$CSV" ] || echo "n,dims,clusters,spread,gap_clusters,gap_ari,outlier_clusters,outlier_ari,z,weakest_centre_score,strongest_other_score,machine,date,version" > "$CSV"
# n dims clusters spread
while read -r n d k s; do
  "$BIN" gen blobs --n "$n" --dims "$d" --clusters "$k" --spread "$s" --seed 11 -o "$tmp/b.npy" > /dev/null
  for rule in gap outliers; do
    "$BIN" dpc "$tmp/b.npy" --labels "$tmp/b.labels.npy" --auto-centers "$rule" -o "$tmp/$rule" --force -q --backend cpu
  done
  row=$(python3 - "$tmp/gap/dpc.h5" "$tmp/outliers/dpc.h5" <<'PY'
import sys
import h5py
import numpy as np
g, o = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
a = o.attrs
gamma = o["gamma"][:]
top = int(np.argmax(o["rho"][:]))
score = (np.log(np.where(gamma > 0, gamma, np.nan)) - a["outlier_log_median"]) / a["outlier_log_scale"]
score[top] = np.nan  # the densest point is a centre by definition
s = np.sort(score[~np.isnan(score)])[::-1]
k = int(a["centers_outlier_rule"]) - 1  # centres other than the densest point
weakest = s[k - 1] if k >= 1 else float("nan")
other = s[k] if k < len(s) else float("nan")
print("%d,%.4f,%d,%.4f,%.3f,%.2f,%.2f" % (g.attrs["n_clusters"], g.attrs["ari"], o.attrs["n_clusters"], o.attrs["ari"],
                                          a["outlier_z"], weakest, other))
PY
)
  echo "$n,$d,$k,$s,$row,\"$MACHINE\",$(date -u +%F),\"$version\"" | tee -a "$CSV"
done <<'CASES'
1000 2 1 1.5
2000 2 5 1.5
2000 2 5 6
5000 2 8 1.5
2000 10 5 1.5
3000 2 1 40
CASES
