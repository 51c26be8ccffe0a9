#!/usr/bin/env bash
# The unit, MPI and command-line tests under AddressSanitizer and
# UndefinedBehaviorSanitizer: a build without CUDA in build-asan/, every
# finding fatal.  Leaks that Open MPI, hwloc and HDF5 keep until exit are
# suppressed (tests/sanitize/lsan.supp); ours are not.  Extra arguments go
# to ctest instead of the default labels (unit, then mpi and cli).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build-asan
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFD_SANITIZE=ON -DFD_WITH_CUDA=OFF > build-asan/build.log 2>&1 ||
  { cat build-asan/build.log; exit 1; }
cmake --build build-asan -j"$(nproc)" >> build-asan/build.log 2>&1 || { tail -40 build-asan/build.log; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitize/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
if [ $# -gt 0 ]; then
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j"$(nproc)" "$@"
  exit
fi
# Leaks are checked in the unit tests.  Under mpirun, Open MPI unloads its
# plugins before LeakSanitizer reports, so their allocations come without
# a module to tell them from ours: the MPI and command-line tests check
# memory errors and undefined behaviour, not leaks.
ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -L unit
ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -L "mpi|cli"
