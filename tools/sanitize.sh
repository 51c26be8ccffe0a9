#!/usr/bin/env bash
# The unit, MPI and command-line tests under AddressSanitizer and
# UndefinedBehaviorSanitizer: a build without CUDA in build-asan/, every
# finding fatal.  Leaks that Open MPI, hwloc and HDF5 keep until exit are
# suppressed (tests/sanitize/lsan.supp); ours are not.
# --thread: the same tests under ThreadSanitizer instead, in build-tsan/
# (data races and lock-order inversions; Open MPI's own are suppressed,
# tests/sanitize/tsan.supp).  Extra arguments go to ctest instead of the
# default labels.
#
#   tools/sanitize.sh [--thread] [ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build() { # DIR FD_SANITIZE
  mkdir -p "$1"
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFD_SANITIZE="$2" -DFD_WITH_CUDA=OFF > "$1/build.log" 2>&1 ||
    { cat "$1/build.log"; exit 1; }
  cmake --build "$1" -j"$(nproc)" >> "$1/build.log" 2>&1 || { tail -40 "$1/build.log"; exit 1; }
}

if [ "${1:-}" = --thread ]; then
  shift
  build build-tsan thread
  # Every report fails its test (exit status 66).
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/sanitize/tsan.supp
  # ThreadSanitizer needs the address layout it knows: kernels that
  # randomise mmap with more bits make it stop at the start ("unexpected
  # memory mapping"); setarch -R turns randomisation off for the tests.
  run=()
  setarch "$(uname -m)" -R true 2> /dev/null && run=(setarch "$(uname -m)" -R)
  if [ $# -gt 0 ]; then
    "${run[@]}" ctest --test-dir build-tsan --output-on-failure -j"$(nproc)" "$@"
  else
    "${run[@]}" ctest --test-dir build-tsan --output-on-failure -j"$(nproc)" -L "unit|mpi|cli"
  fi
  exit
fi

build build-asan ON
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
