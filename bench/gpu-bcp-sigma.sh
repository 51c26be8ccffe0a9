#!/usr/bin/env bash
# bcp's per-mode covariance on one GPU (bench/bcp_sigma.cu): the sweep's
# one-block kernel (src/bcp/bcp_sigma.cuh) against cuSOLVER's dpotrf and
# dpotri with the kernels around them, the device time of one mode's step
# at R = 8 to 64, and whether the two agree.  Needs nvcc and cuSOLVER;
# prints one line an R.  Results: bench/results/bcp-gpu-history.txt.
#
#   bench/gpu-bcp-sigma.sh [--arch sm_90]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
ARCH=sm_90
bench_options 2,8 "--arch=ARCH" "$@"
run_cu "$here/bcp_sigma.cu" -O2 -arch="$ARCH" -lcusolver
