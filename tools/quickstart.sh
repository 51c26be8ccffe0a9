#!/usr/bin/env bash
# Quick start: install what is missing, build, and run the lattice of a
# generated context under `mpirun -np 2`, on the GPU when there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
bash tools/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p examples
build/fcbo-dist gen context --objects 2000 --attributes 40 --density 0.2 --seed 1 -o examples/quick.cxt
rm -rf examples/quick-out
mpirun -np 2 --oversubscribe build/fcbo-dist lattice examples/quick.cxt -o examples/quick-out --backend auto --stats
build/fcbo-dist info examples/quick-out/lattice.h5
