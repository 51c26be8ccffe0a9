#!/usr/bin/env bash
# bcp on the CPU: milliseconds per sweep of `fcbo-dist bcp -t THREADS` (--stats) on
# `gen tensor` tensors of --shapes at --ranks (started at that rank, run
# for --sweeps sweeps with --tol 0 so that every run does the same work),
# and, in the same run, one sweep of TensorLy's CP-ALS (parafac, numpy
# backend) on the same tensor (bench/bcp_tensorly.py), where TensorLy is
# installed.  Appends to bench/results/bcp-cpu.csv.
#
#   bench/bcp.sh [--shapes "40x40x40x40 100x100x100"] [--ranks "16 32"] [--sweeps 10] [--threads 1] [--bin PATH] [--csv FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; SHAPES="40x40x40x40 100x100x100"; RANKS="16 32"; SWEEPS=10; THREADS=1
CSV=$here/results/bcp-cpu.csv
MACHINE="$(nproc) cores $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
bench_options 2,9 "--shapes=SHAPES --ranks=RANKS --sweeps=SWEEPS --threads=THREADS --bin=BIN --csv=CSV" "$@"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2)
# The tool's name says whether the build has OpenBLAS (plain loops without).
tool=fcbo-dist; "$BIN" version | grep -q '^OpenBLAS.*: built' && tool=fcbo-dist-openblas
[ -f "$CSV" ] || echo "tool,shape,rank,sweeps,threads,ms_per_sweep,fit,machine,date,version" > "$CSV"
row() { echo "$1,\"$MACHINE\",$(date -u +%F),$version" | tee -a "$CSV"; }
for shape in $SHAPES; do
  "$BIN" gen tensor --shape "$shape" --rank 5 --snr 20 --seed 1 -o "$tmp/t.npy"
  for R in $RANKS; do
    "$BIN" bcp "$tmp/t.npy" --rank "$R" --max-iter "$SWEEPS" --tol 0 --init random -t "$THREADS" --stats -o "$tmp/o" --force \
      2> "$tmp/err" || { echo "failed: $(tail -2 "$tmp/err")" >&2; continue; }
    ms=$(sed -n 's/.*(\([0-9.]*\) ms a sweep, median.*/\1/p' "$tmp/err")
    fit=$(sed -n 's/.*: fit \([0-9.]*\) after.*/\1/p' "$tmp/err")
    row "$tool,$shape,$R,$SWEEPS,$THREADS,$ms,$fit"
    if python3 -c "import tensorly" 2> /dev/null; then
      t=$(python3 "$here/bcp_tensorly.py" "$tmp/t.npy" "$R" "$SWEEPS") && row "tensorly-parafac,$shape,$R,$SWEEPS,,$t,"
    fi
  done
done
