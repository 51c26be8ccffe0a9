#!/usr/bin/env bash
# Spearman on the GPU: `fcbo-dist spearman --backend cuda` on zero-inflated
# count matrices (`gen counts`, 30 columns, 50 row groups) of --sizes rows,
# on 1 GPU and, where the machine has two, on 2 ranks; in the modes:
# count-only-p1e-12 (--count-only --pvalue 1e-12: one pass, histogram and
# count), p1e-12 (--pvalue 1e-12 -o DIR: the count pass, which keeps the
# selected pairs, then their writing), p1e-12-nohist (the same with
# --no-histogram; not in the default --modes), count-only (--count-only at the
# default p <= 0.05, where 5% of all pairs are selected), count-only-fdr
# (--count-only --fdr 0.05: pass 1 bins those 5% by x, then the cutoff's
# collecting pass; not in the default --modes) and top-k10 (--top-k 10 -o
# DIR: every ordered pair, N (N - 1); not in the default --modes).  Side by
# side in the same call:
# the CPU backend on every core at --cpu-rows rows (it needs minutes for
# millions), and the peer a user would write in torch on the same GPU
# (bench/spearman_torch_peer.py) at the first size.  compute_s is pass 1
# plus the FDR cutoff and the write (or pass 2) from --stats (load and output setup
# excluded; wall_s has everything).  Appends to bench/results/spearman-gpu.csv.
#
#   bench/gpu-spearman.sh [--sizes "2000000"] [--modes "count-only-p1e-12 p1e-12 count-only"]
#                         [--gpus "1 2"] [--cpu-rows 200000 (0: none)] [--bin PATH] [--csv FILE] [--no-torch]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; SIZES="2000000"; CPUROWS=200000; TORCH=1
MODES="count-only-p1e-12 p1e-12 count-only"; GPUS="1 2"
CSV=$here/results/spearman-gpu.csv
gpu_machine
bench_options 2,21 "--sizes=SIZES --cpu-rows=CPUROWS --bin=BIN --modes=MODES --gpus=GPUS --csv=CSV --no-torch=TORCH!0" "$@"
for mode in $MODES; do
  spearman_mode_args "$mode" . || { echo "bench/gpu-spearman.sh: unknown mode $mode" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 FD_GPU_VERBOSE=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2)
[ -f "$CSV" ] || echo "tool,mode,rows,cols,pairs,backend,ranks,load_s,compute_s,wall_s,pairs_per_s,selected,machine,date,version" > "$CSV"
row() { echo "$1,$2,$3,30,$4,$5,$6,$7,$8,$9,${10},${11},\"$MACHINE\",$(date -u +%F),$version" | tee -a "$CSV"; }

# N backend ranks mode
one() {
  local N=$1 be=$2 np=$3 mode=$4 launch=() args
  [ "$np" -gt 1 ] && launch=(mpirun -np "$np" --bind-to none)
  spearman_mode_args "$mode" "$tmp/out"; args=("${SPEARMAN_ARGS[@]}")
  local t0 t1; t0=$(date +%s.%N)
  "${launch[@]}" "$BIN" spearman "$tmp/m$N.npy" "${args[@]}" --backend "$be" --stats 2> "$tmp/err" < /dev/null ||
    { echo "failed: $be np=$np $mode: $(tail -3 "$tmp/err")" >&2; return; }
  t1=$(date +%s.%N)
  local pairs=$((N * (N - 1) / 2)) sel load c wall
  [ "$mode" = top-k10 ] && pairs=$((N * (N - 1)))
  sel=$(sed -n 's/^\([0-9]*\) of .*/\1/p' "$tmp/err")
  local p1 rest
  read -r load p1 rest < <(spearman_stats_times "$tmp/err")
  c=$(awk -v a="$p1" -v b="$rest" 'BEGIN{printf "%.3f", a + b}')
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
  row fcbo-dist "$mode" "$N" "$pairs" "$be" "$np" "$load" "$c" "$wall" \
      "$(awk -v p="$pairs" -v s="$c" 'BEGIN{printf "%.4g", p / s}')" "$sel"
  grep '^gpu:' "$tmp/err" || true
}

if [ "$CPUROWS" -gt 0 ]; then
  "$BIN" gen counts --rows "$CPUROWS" --cols 30 --groups 50 --seed 1 -o "$tmp/m$CPUROWS.npy"
  for mode in $MODES; do
    one "$CPUROWS" cpu 1 $mode
    one "$CPUROWS" cuda 1 $mode
  done
fi
first=1
for N in $SIZES; do
  "$BIN" gen counts --rows "$N" --cols 30 --groups 50 --seed 1 -o "$tmp/m$N.npy"
  for mode in $MODES; do
    for g in $GPUS; do
      [ "${NGPU:-0}" -ge "$g" ] && one "$N" cuda "$g" $mode
    done
  done
  if [ $first = 1 ] && [ $TORCH = 1 ]; then
    python3 "$here/spearman_torch_peer.py" "$tmp/m$N.npy" 1e-12 2> "$tmp/terr" > "$tmp/tout" ||
      echo "torch peer failed: $(tail -3 "$tmp/terr")" >&2
    read -r tsel tsec < "$tmp/tout" || true
    [ -n "${tsec:-}" ] && row torch p1e-12 "$N" "$((N * (N - 1) / 2))" "torch-cuda" 1 "" "$tsec" "" \
      "$(awk -v p="$((N * (N - 1) / 2))" -v s="$tsec" 'BEGIN{printf "%.4g", p / s}')" "$tsel"
  fi
  first=0
done
