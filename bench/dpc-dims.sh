#!/usr/bin/env bash
# Density peaks in many dimensions (embeddings): `fcbo-dist dpc` on `gen
# blobs` sets of --n points in each of --dims dimensions (8 clusters,
# --neighbors 30, --centers 8, .npy input), on each of --backends (cpu on
# every core; cuda: one GPU, which takes up to 128 coordinates by brute
# force in shared-memory tiles), phases from --stats; wall_s is the whole
# command.  Appends to bench/results/dpc-dims.csv.
#
#   bench/dpc-dims.sh [--n 100000] [--dims "2 10 32 64 128"] [--backends "cpu cuda"] [--bin PATH] [--csv FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; N=100000; DIMS="2 10 32 64 128"; BACKENDS="cpu cuda"
CSV=$here/results/dpc-dims.csv
bench_options 2,9 "--n=N --dims=DIMS --backends=BACKENDS --bin=BIN --csv=CSV" "$@"
gpu_machine
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
version=$(bin_version "$BIN")
[ -f "$CSV" ] || echo "points,dims,backend,load_s,dc_s,rho_s,delta_s,assign_s,wall_s,clusters,ari,machine,date,version" > "$CSV"
for d in $DIMS; do
  "$BIN" gen blobs --n "$N" --dims "$d" --clusters 8 --seed 7 -o "$tmp/p.npy" > /dev/null || exit 1
  for be in $BACKENDS; do
    t0=$(date +%s.%N)
    "$BIN" dpc "$tmp/p.npy" --labels "$tmp/p.labels.npy" --neighbors 30 --centers 8 --backend "$be" --stats \
      -o "$tmp/o" --force > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; continue; }
    t1=$(date +%s.%N)
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    IFS=, read -r load dc rho delta assign clusters ari <<< "$(dpc_phases "$tmp/o/dpc.h5")"
    echo "$N,$d,$be,$load,$dc,$rho,$delta,$assign,$wall,$clusters,$ari,\"$MACHINE\",$(date +%F),$version" | tee -a "$CSV"
  done
done
