#!/usr/bin/env bash
# How the rho histogram's increments fall, from the histogram itself: the
# zero-inflated count matrix of the GPU benchmarks (`gen counts --cols 30
# --groups 50 --seed 1`, --rows rows), `spearman --count-only -o` on the
# CPU backend, then (bench/spearman_bins.py) the bins in effect
# (1 / sum p_b^2), how many bins hold half, 90% and 99% of the pairs, how
# often two pairs of one thread share a bin (so that combining them would
# save an increment), and, drawing 32 bins from the histogram for each of a
# warp's increment instructions, the shared-memory wavefronts an
# instruction takes (the bank of bin b's slot is (b + 1) mod 32: the most
# distinct slots any one bank is asked for), to set beside Nsight
# Compute's count (spearman-gpu-ncu.txt); the same for C copies of the
# histogram interleaved word by word, lane L counting into copy L mod C,
# with 32-bit counts and with 16-bit ones (two slots a word).  Results:
# bench/results/spearman-bins.txt (appended).
#
#   bench/spearman-bins.sh [--rows 100000] [--bin PATH] [--out FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; ROWS=100000; OUTF=$here/results/spearman-bins.txt
bench_options 2,17 "--rows=ROWS --bin=BIN --out=OUTF" "$@"
python3 -c "import numpy, h5py" 2> /dev/null || { echo "bench/spearman-bins.sh: needs numpy and h5py" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$BIN" gen counts --rows "$ROWS" --cols 30 --groups 50 --seed 1 -o "$tmp/m.npy" || exit 1
"$BIN" spearman "$tmp/m.npy" --count-only --backend cpu -o "$tmp/out" -q || exit 1
MACHINE="$(nproc) cores $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
{
  echo "# bench/spearman-bins.sh --rows $ROWS, $(date -u +%F), $MACHINE, fcbo-dist $("$BIN" version | head -1 | cut -d' ' -f2)"
  python3 "$here/spearman_bins.py" "$tmp/out/spearman.h5"
} | tee -a "$OUTF"
