#!/usr/bin/env bash
# The test suite, as CI runs it: install what is missing, build (CUDA
# included where nvcc exists), run every test that needs no GPU, the
# sanitizer builds' tests (tools/sanitize.sh: ASan with UBSan, then
# ThreadSanitizer) and a minute of fuzzing per
# parser (tools/fuzz.sh).  Pass -L gpu (on a GPU machine) or other ctest
# arguments to run only those tests of build/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
bash tools/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ $# -gt 0 ]; then
  ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
  exit
fi
# CI: every test that needs no GPU; then the unit, MPI and command-line
# tests again under ASan and UBSan, and again under ThreadSanitizer; then
# each parser fuzzed for a minute from its seed corpus (tests/fuzz).
ctest --test-dir build --output-on-failure -j"$(nproc)" -LE gpu
bash tools/sanitize.sh
bash tools/sanitize.sh --thread
bash tools/fuzz.sh --seconds 60
