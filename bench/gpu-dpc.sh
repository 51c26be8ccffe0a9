#!/usr/bin/env bash
# Density peaks on the GPU: `fcbo-dist dpc --backend cuda` (cutoff kernel,
# --neighbors 30, --centers K) on `gen blobs` sets of --sizes 2-D points
# (--input npy, the default, or txt: the format of the file read),
# on 1 GPU and, where the machine has two, on 2 ranks; side by side in the
# same call, the CPU backend on every core at the first size and the torch
# peer (bench/dpc_torch_peer.py: cdist by tiles, count, masked minimum) at
# --torch-max points or fewer.  The phases (load_s to assign_s) are from
# --stats: rho_s and delta_s include building the grids and gathering the
# ranks' shares; compute_s is rho_s + delta_s (for the torch peer, its
# rho and delta); wall_s is the whole command (mpirun included).
# --reps R runs the GPU rows R times each (a row each); --no-cpu leaves the
# CPU backend out; --breakdown adds, per size, one run with FD_GPU_VERBOSE
# (without --labels) and prints its steps' times (stream waited for at
# each).  Appends to bench/results/dpc-gpu.csv.
#
#   bench/gpu-dpc.sh [--sizes "1000000 10000000"] [--input npy|txt] [--torch-max 1000000] [--reps 1] [--no-cpu]
#                    [--breakdown] [--bin PATH] [--csv FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; SIZES="1000000 10000000"; TORCHMAX=1000000; INPUT=npy; REPS=1; CPU=1; BREAKDOWN=0
CSV=$here/results/dpc-gpu.csv
gpu_machine
bench_options 2,18 "--sizes=SIZES --torch-max=TORCHMAX --bin=BIN --input=INPUT --csv=CSV --reps=REPS --no-cpu=CPU!0 --breakdown=BREAKDOWN!1" "$@"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2)
case $INPUT in npy|txt) ;; *) echo "bench/gpu-dpc.sh: --input npy or txt" >&2; exit 2;; esac
[ -f "$CSV" ] || echo "tool,points,input,backend,ranks,load_s,dc_s,rho_s,delta_s,assign_s,compute_s,wall_s,dc,clusters,machine,date,version" > "$CSV"
row() { echo "$1,\"$MACHINE\",$(date -u +%F),$version" | tee -a "$CSV"; }

one() {  # N backend ranks
  local N=$1 be=$2 np=$3 launch=()
  [ "$np" -gt 1 ] && launch=(mpirun -np "$np" --bind-to none)
  local t0 t1; t0=$(date +%s.%N)
  "${launch[@]}" "$BIN" dpc "$tmp/b$N.$INPUT" --labels "$tmp/b$N.labels.$INPUT" --neighbors 30 --centers 50 --backend "$be" --stats \
    2> "$tmp/err" < /dev/null || { echo "failed: $be np=$np: $(tail -3 "$tmp/err")" >&2; return; }
  t1=$(date +%s.%N)
  local phases dc k
  # "load A s, d_c B s, rho C s, delta D s, centres and labels E s" -> A,B,C,D,E
  phases=$(sed -n 's/^load \([0-9.]*\) s, d_c \([0-9.]*\) s, rho \([0-9.]*\) s, delta \([0-9.]*\) s, centres and labels \([0-9.]*\) s$/\1,\2,\3,\4,\5/p' "$tmp/err")
  dc=$(sed -n 's/.*d_c = \([0-9.e+-]*\)).*/\1/p' "$tmp/err")
  k=$(sed -n 's/^\([0-9]*\) clusters in.*/\1/p' "$tmp/err")
  local compute; compute=$(echo "${phases:-,,,,}" | awk -F, '$3 != "" {printf "%.3f", $3 + $4}')
  row "fcbo-dist,$N,$INPUT,$be,$np,${phases:-,,,,},$compute,$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}'),$dc,$k"
  DC=$dc
}

first=1
for N in $SIZES; do
  "$BIN" gen blobs --n "$N" --dims 2 --clusters 50 --seed 1 -o "$tmp/b$N.$INPUT"
  for ((r = 0; r < REPS; r++)); do
    one "$N" cuda 1
    [ "${NGPU:-0}" -ge 2 ] && one "$N" cuda 2
  done
  [ $first = 1 ] && [ "$CPU" = 1 ] && one "$N" cpu 1
  if [ "$BREAKDOWN" = 1 ]; then
    echo "# $N points, FD_GPU_VERBOSE:"
    FD_GPU_VERBOSE=1 "$BIN" dpc "$tmp/b$N.$INPUT" --neighbors 30 --centers 50 --backend cuda --stats 2>&1 < /dev/null |
      grep -E "^gpu dpc|^load|^read"
  fi
  if [ "$N" -le "$TORCHMAX" ] && python3 -c "import torch" 2> /dev/null; then
    s=$(python3 "$here/dpc_torch_peer.py" "$tmp/b$N.$INPUT" "$DC" 2> "$tmp/terr") ||
      echo "torch peer failed: $(tail -3 "$tmp/terr")" >&2
    # The peer times rho and delta only (its reading excluded).
    [ -n "${s:-}" ] && row "torch,$N,$INPUT,torch-cuda,1,,,,,,$s,,$DC,"
  fi
  first=0
done
