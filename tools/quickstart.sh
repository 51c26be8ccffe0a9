#!/usr/bin/env bash
# Quick start: install what is missing, build, and run the lattice of a
# generated context under `mpirun -np 2`, on the GPUs when there are two
# (one rank per GPU), on one GPU with one rank, else on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
bash tools/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p examples
build/fcbo-dist gen context --objects 2000 --attributes 40 --density 0.2 --seed 1 -o examples/quick.cxt
rm -rf examples/quick-out
NGPU=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
NP=2; [ "${NGPU:-0}" -eq 1 ] && NP=1
mpirun -np $NP --oversubscribe --bind-to none build/fcbo-dist lattice examples/quick.cxt -o examples/quick-out \
  --backend auto --stats
build/fcbo-dist info examples/quick-out/lattice.h5
