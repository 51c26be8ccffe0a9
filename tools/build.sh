#!/usr/bin/env bash
# Configures and builds into build/ (Release).  Uses nvcc from the PATH or
# /usr/local/cuda when present, so the CUDA sources always compile where
# a toolkit exists.  Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
mkdir -p build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" > build/build.log 2>&1 || { cat build/build.log; exit 1; }
cmake --build build -j"$(nproc)" >> build/build.log 2>&1 || { tail -50 build/build.log; exit 1; }
grep -E "fcbo-dist: CUDA" build/build.log || true
