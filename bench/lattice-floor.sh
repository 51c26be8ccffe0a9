#!/usr/bin/env bash
# The byte floor of a concept (docs/performance.md, "How far from the
# floor"): runs the CPU backend on the shared sets, reads the supports and
# intent sizes back with h5py, and prints per data set the mean extent and
# intent sizes, the bytes a concept needs at least (rows of its extent's
# objects, its extent written once, its output), the time those bytes take
# at 4.3 TB/s and the output at an assumed 50 GB/s, next to the CUDA
# enumeration time recorded in bench/results/lattice-gpu.csv (first row of
# the set; "-" when there is none).  Results: bench/results/lattice-floor.txt.
#
#   bench/lattice-floor.sh [--bin PATH] [--shared DIR] [--csv lattice-gpu.csv]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; SHARED=$here/../../shared; CSV=$here/results/lattice-gpu.csv
bench_options 2,11 "--bin=BIN --shared=SHARED --csv=CSV" "$@"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# name file min_support
for set in "mushroom mushroom.dat 0" "T10I4D100K T10I4D100K.dat 0" "chess chess.dat 816"; do
  set -- $set
  "$BIN" lattice "$SHARED/data/fca/$2" --min-support "$3" -o "$tmp/$1" -q --backend cpu
  python3 - "$tmp/$1/lattice.h5" "$1" "$3" "$CSV" <<'PY'
import csv, math, sys
import h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
name, ms = sys.argv[2], sys.argv[3]
s = f["supports"][:].astype(np.float64)
nb = np.diff(f["intents/offsets"][:]).astype(np.float64)
aw = max(1, math.ceil(int(f.attrs["n_attributes"]) / 64))  # attributes kept may be fewer; an upper bound
n = len(s)
out = (12 + 4 * nb).sum()
rows = (s * aw * 8).sum()
ext = (4 * s).sum()
gpu = "-"
for r in csv.DictReader(open(sys.argv[4])):
    if r["dataset"] == name and r["min_support"] == ms and r["backend"] == "cuda" and r["ranks"] == "1":
        gpu = float(r["enum_seconds"])
        break
t = "-" if gpu == "-" else "%.1f ms, %.0f ns/concept" % (gpu * 1e3, gpu / n * 1e9)
print("%-10s ms %-4s concepts %9d  mean|C| %7.1f  mean|B| %5.1f  aw %2d  bytes/concept %6.0f  "
      "floor %6.2f ms  output@50GB/s %5.1f ms  cuda %s"
      % (name, ms, n, s.mean(), nb.mean(), aw, (out + rows + ext) / n, (out + rows + ext) / 4.3e12 * 1e3,
         out / 50e9 * 1e3, t))
PY
done
