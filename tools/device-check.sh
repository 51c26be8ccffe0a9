#!/usr/bin/env bash
# The GPU machine's one call: configure and build for sm_90, then run the
# GPU tests (the CUDA backends against the CPU backend) and copy the logs
# to $OUT.  Dependencies the machine lacks come from .carry/deps
# (tools/device-deps.sh, passed with carry: [".carry"]).
# Usage: [FD_BUILD_TARGETS="fcbo-dist ..."] tools/device-check.sh [CTEST_ARGS...]   (default: -L gpu)
set -uo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
out=${OUT:-/tmp/device-check}; mkdir -p "$out"
deps=$PWD/.carry/deps
hints=()
have() { [ -e "$1" ]; }
if ! have /usr/include/boost/math/special_functions/beta.hpp || ! have /usr/include/openssl/sha.h ||
   ! have /usr/include/lapacke.h; then
  if [ -d "$deps" ]; then
    echo "device-check: using .carry/deps for what is missing" | tee "$out/deps.txt"
    for h in /usr/include/boost/math/special_functions/beta.hpp /usr/include/openssl/sha.h /usr/include/lapacke.h; do
      have "$h" && echo "  have $h" || echo "  lack $h"
    done | tee -a "$out/deps.txt"
    hints=(-DCMAKE_PREFIX_PATH="$deps" -DFD_BOOST_INC="$deps/include" -DOPENSSL_ROOT_DIR="$deps"
           -DFD_LAPACKE_INC="$deps/include" -DFD_LAPACKE_LIB="$deps/lib/liblapacke.so"
           -DFD_LAPACK_LIB="$deps/lib/libopenblas.so")
    export LD_LIBRARY_PATH="$deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  else
    echo "device-check: dependencies missing and no .carry/deps (run tools/device-deps.sh here first)" >&2; exit 2
  fi
fi
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${hints[@]}" > "$out/configure.log" 2>&1 ||
  { tail -40 "$out/configure.log"; exit 1; }
grep -E "fcbo-dist:" "$out/configure.log"
# FD_BUILD_TARGETS: only these (say fcbo-dist, for a test that runs the binary alone), when device time is short.
read -r -a targets <<< "${FD_BUILD_TARGETS:-all}"
cmake --build build-gpu -j"$(nproc)" --target "${targets[@]}" > "$out/build.log" 2>&1 ||
  { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "device-check: built in $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[ $# -gt 0 ] || set -- -L gpu
ctest --test-dir build-gpu "$@" --output-on-failure > "$out/ctest.log" 2>&1; rc=$?
grep -E "Test +#|tests passed|tests failed|The following|\*\*\*" "$out/ctest.log" | tail -40
exit $rc
