#!/usr/bin/env bash
# compute-sanitizer over the CUDA dpc backend on 20,000 blobs points with
# d_c by --neighbors (the GPU's radix select): memcheck and racecheck with
# the grids (cutoff kernel) and without (FD_DPC_GRID=off), memcheck of the
# Gaussian kernel, and memcheck of two ranks (NCCL), where the machine has
# two GPUs.  A non-zero status from a tool is a finding, except NCCL's own
# cudaFuncGetAttributes probe at set-up (see
# bench/results/dpc-gpu-sanitizer.txt).
#
#   bench/gpu-dpc-sanitizer.sh [--bin PATH] [--out DIR]   (full reports in DIR)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; OUT=${TMPDIR:-/tmp}/fd-sanitizer-dpc
bench_options 2,10 "--bin=BIN --out=OUT" "$@"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
"$BIN" gen blobs --n 20000 --dims 2 --clusters 8 --seed 3 -o "$OUT/s.txt"
worst=0
one() {  # name env tool args...
  local name=$1 env=$2 tool=$3; shift 3
  env $env timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 "$BIN" dpc "$OUT/s.txt" --neighbors 10 \
    --backend cuda -q "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?; [ $rc -gt $worst ] && worst=$rc
  echo "$name rc=$rc  $(grep -E 'SUMMARY' "$OUT/$name.txt" | tail -1)"
}
one memcheck-cutoff FD_DPC_GRID=on memcheck
one memcheck-gaussian FD_DPC_GRID=on memcheck --kernel gaussian
one memcheck-nogrid FD_DPC_GRID=off memcheck
one racecheck-cutoff FD_DPC_GRID=on racecheck
one racecheck-nogrid FD_DPC_GRID=off racecheck
if [ "$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')" -ge 2 ]; then
  timeout 300 mpirun -np 2 --bind-to none compute-sanitizer --tool memcheck "$BIN" dpc "$OUT/s.txt" --neighbors 10 \
    --backend cuda -q > "$OUT/memcheck-np2.txt" 2>&1
  echo "memcheck-np2 rc=$?: $(grep -c 'Program hit' "$OUT/memcheck-np2.txt") reports," \
    "$(grep 'Program hit' "$OUT/memcheck-np2.txt" | grep -vc cudaFuncGetAttributes) not NCCL's set-up probe"
fi
exit $worst
