#!/usr/bin/env bash
# How the CUDA lattice backend shares one tree between GPUs: rank 0 splits
# the top of the tree on the host, GPU ranks take subtrees from the pool a
# few at a time.  Runs `lattice --backend cuda --stats` with FD_GPU_VERBOSE=1
# on 1 and 2 ranks for several settings of the two knobs
# (FD_DEVICE_TASKS: subtrees per GPU rank; FD_GPU_REFILL: subtrees taken per
# refill) and prints, per GPU, its steps, subtrees, seconds waiting for
# subtrees and seconds in steps, and rank 0's enumeration and split time.
# Needs 2 GPUs for the 2-rank lines.  Results: bench/results/lattice-gpu-split.txt.
#
#   bench/gpu-lattice-split.sh [--bin PATH] [--shared DIR] [--variants "256:8 64:8 1024:8 256:32"]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
# The GPU's own work is measured: a lone GPU rank's threads would begin
# the search while the GPU starts (FD_GPU_HOST_START, on by default).
export FD_GPU_HOST_START=off
BIN=$here/../build/fcbo-dist; SHARED=$here/../../shared; VARIANTS="256:8 64:8 1024:8 256:32"
bench_options 2,12 "--bin=BIN --shared=SHARED --variants=VARIANTS" "$@"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$BIN" gen context --objects 68000 --attributes 412 --density 0.11 --seed 1 -o "$tmp/s68k.dat"
for a in "$SHARED/data/fca/chess.dat --min-support 816" "$tmp/s68k.dat --min-support 68" "$SHARED/data/fca/T10I4D100K.dat"; do
  for v in $VARIANTS; do
    for np in 1 2; do
      echo "== $a tasks=${v%:*} refill=${v#*:} np=$np"
      FD_DEVICE_TASKS=${v%:*} FD_GPU_REFILL=${v#*:} FD_GPU_VERBOSE=1 timeout 60 \
        mpirun -np $np --bind-to none "$BIN" lattice $a --backend cuda --stats 2>&1 |
        grep "gpu \|enumeration" | sed 's/steps of up to [0-9]* nodes, stack at most.*extent ids;//'
    done
  done
done
