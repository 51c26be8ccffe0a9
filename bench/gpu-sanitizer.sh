#!/usr/bin/env bash
# compute-sanitizer over the CUDA lattice backend on a small random context
# (300 x 70, density 0.2), with and without a minimum support (the two
# candidate-scan kernels), extents written, and with every extent a bitset
# closed by columns: memcheck, racecheck, synccheck and initcheck.  Prints each tool's summary line; a non-zero status from a
# tool is a finding.  Results: bench/results/lattice-gpu-sanitizer.txt.
#
#   bench/gpu-sanitizer.sh [--bin PATH] [--out DIR]   (full reports in DIR)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
# The GPU's own work is measured: a lone GPU rank's threads would begin
# the search while the GPU starts (FD_GPU_HOST_START, on by default).
export FD_GPU_HOST_START=off
BIN=$here/../build/fcbo-dist; OUT=${TMPDIR:-/tmp}/fd-sanitizer
bench_options 2,8 "--bin=BIN --out=OUT" "$@"
mkdir -p "$OUT"
"$BIN" gen context --objects 300 --attributes 70 --density 0.2 -o "$OUT/s.dat"
worst=0
# The default mix of list and bitset extents, then every extent a bitset
# closed by columns.
for tool in memcheck racecheck synccheck initcheck; do
  for v in "ms=0" "ms=5" "ms=0 FD_GPU_BITS_MIN=1 FD_GPU_CLOSURE=columns"; do
    ms=${v%% *}; ms=${ms#ms=}; e=${v#ms=$ms}; f="$OUT/sanitizer-$tool-$(echo "$v" | tr ' =' '_-').txt"
    env $e timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 "$BIN" lattice "$OUT/s.dat" --backend cuda -q \
      --extents -o "$OUT/o" --force --min-support "$ms" > "$f" 2>&1
    rc=$?; [ $rc -gt $worst ] && worst=$rc
    echo "$tool $v rc=$rc  $(tail -1 "$f")"
  done
done
exit $worst
