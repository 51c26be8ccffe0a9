#!/usr/bin/env bash
# Shared-memory histogram increments alone on one GPU (bench/gpu_atomics.cu):
# how many a multiprocessor can do a clock as the Spearman kernel does them
# (one red.shared a value, bins spread over 2000) and in the other ways a
# kernel could count (an addend not known to be 1, a copy of the histogram
# a lane, load-add-store in a warp's own copy), and with loads among the
# increments.  Needs nvcc; prints one CSV line a mode.  Results:
# bench/results/gpu-atomics.csv.
#
#   bench/gpu-atomics.sh [--arch sm_90] [--iters N]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
ARCH=sm_90 ITERS=20000
bench_options 2,10 "--arch=ARCH --iters=ITERS" "$@"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
build_cu "$here/gpu_atomics.cu" "$tmp/atomics" -O3 -arch="$ARCH" || exit 1
echo "# $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | head -1), $(date -u +%F)"
"$tmp/atomics" "$ITERS"
