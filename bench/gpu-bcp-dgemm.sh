#!/usr/bin/env bash
# bcp's two contraction DGEMMs alone on one GPU (bench/bcp_dgemm.cu): the
# calls of src/bcp/bcp_gpu.cu against the same products with row-major
# outputs, at the block shapes of a 200^4 tensor on one GPU and on two, R =
# 16 and 32: how far the products of a sweep are from the floor, and what
# two GPUs can gain.  Needs nvcc and cuBLAS; prints one line a shape and R.
# Results: bench/results/bcp-gpu-history.txt (step 8).
#
#   bench/gpu-bcp-dgemm.sh [--arch sm_90]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
ARCH=sm_90
bench_options 2,9 "--arch=ARCH" "$@"
run_cu "$here/bcp_dgemm.cu" -O2 -arch="$ARCH" -lcublas
