#!/usr/bin/env bash
# The test suite, as CI runs it: install what is missing, build (CUDA
# included where nvcc exists), run every test that needs no GPU.
# Pass -L gpu (on a GPU machine) or other ctest arguments to choose.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
bash tools/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ $# -eq 0 ]; then set -- -LE gpu; fi
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
