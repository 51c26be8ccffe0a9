#!/usr/bin/env bash
# The CUDA lattice backend side by side with the CPU backend, in one call
# on one machine: CPU on 1 thread and on every core, CUDA on 1 GPU and, where
# the machine has more, on 2 ranks (one GPU each).  Times are the
# enumeration of rank 0 as `lattice --stats` reports it (the context read,
# the CUDA context and the output are outside it), median of --reps, with
# no output file so that HDF5 does not set the pace; wall is the whole
# command.  Appends rows to bench/results/lattice-gpu.csv.
#
#   bench/gpu-lattice.sh [--bin PATH] [--shared DIR] [--sets "t10 mushroom chess816 synth68k"]
#                        [--reps 3] [--cpu1 "sets to run on 1 CPU thread"] [--csv FILE] [--machine NAME]
#                        [--backends "cpu cuda"]
#
# synth68k is `gen context --objects 68000 --attributes 412 --density 0.11`
# (the shape of the largest context in seed 000) at --min-support 68 (0.1%,
# 11.6 million concepts; about 3 minutes on one CPU thread, so --cpu1 leaves
# it out unless asked); synth68k-340 the same at 340 (0.5%); synth68k-full
# without a minimum support (more than 10^9 concepts); synth68k-MS and
# chess-MS take any minimum support MS.  --backends cuda leaves out the CPU
# runs (for the large sets, where 16 CPU threads take minutes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
# The GPU's own work is measured: a lone GPU rank's threads would begin
# the search while the GPU starts (FD_GPU_HOST_START, on by default).
export FD_GPU_HOST_START=off
BIN=$here/../build/fcbo-dist
SHARED=$here/../../shared; CSV=$here/results/lattice-gpu.csv
SETS="t10 mushroom chess816 synth68k-340 synth68k"; REPS=3; BACKENDS="cpu cuda"; CPU1="t10 mushroom chess816 synth68k-340"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1 || true)
MACHINE="$(nproc) cores $(lscpu | sed -n 's/^Model name: *//p' | head -1), ${GPU:-no GPU}"
bench_options 2,22 "--bin=BIN --shared=SHARED --sets=SETS --reps=REPS --cpu1=CPU1 --csv=CSV --machine=MACHINE --backends=BACKENDS" "$@"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
NGPU=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
NCORE=$(nproc)
[ -f "$CSV" ] || echo "dataset,objects,attributes,density,min_support,concepts,backend,workers,ranks,enum_seconds,wall_seconds,concepts_per_s,machine,date,version" > "$CSV"
version=$("$BIN" version | head -1 | cut -d' ' -f2)

# name file min_support backend threads ranks
run_one() {
  local name=$1 file=$2 ms=$3 be=$4 t=$5 np=$6 shape=$7
  local launch=(); [ "$np" -gt 1 ] && launch=(mpirun -np "$np" --bind-to none)
  local es=() ws=() concepts=0
  for r in $(seq "$REPS"); do
    local t0 t1; t0=$(date +%s.%N)
    "${launch[@]}" "$BIN" lattice "$file" --backend "$be" -t "$t" --min-support "$ms" --stats 2> "$tmp/err" || {
      cat "$tmp/err" >&2; return 1; }
    t1=$(date +%s.%N)
    ws+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", b - a}')")
    es+=("$(sed -n 's/.*enumeration \([0-9.]*\) s.*/\1/p' "$tmp/err")")
    concepts=$(awk '/ concepts in /{print $1; exit}' "$tmp/err")
  done
  local e w; e=$(printf '%s\n' "${es[@]}" | median); w=$(printf '%s\n' "${ws[@]}" | median)
  local rate; rate=$(awk -v c="$concepts" -v s="$e" 'BEGIN{printf "%.0f", c / s}')
  local workers=$t; [ "$be" = cuda ] && workers=$np
  printf '%-14s ms %-5s %-4s x%-3s ranks %d %11d concepts  enum %8.4f s  wall %8.3f s  %11d concepts/s\n' \
    "$name" "$ms" "$be" "$workers" "$np" "$concepts" "$e" "$w" "$rate"
  echo "$name,$shape,$ms,$concepts,$be,$workers,$np,$e,$w,$rate,\"$MACHINE\",$(date -u +%F),$version" >> "$CSV"
}

run_set() {
  local name=$1 file=$2 ms=$3 set=$4
  [ -e "$file" ] || { echo "skip $name: $file absent" >&2; return; }
  local shape; shape=$(context_shape "$file" | tr ' ' ,)
  if [[ " $BACKENDS " == *" cpu "* ]]; then
    if [[ " $CPU1 " == *" $set "* ]]; then run_one "$name" "$file" "$ms" cpu 1 1 "$shape"; fi
    run_one "$name" "$file" "$ms" cpu "$NCORE" 1 "$shape"
  fi
  if [[ " $BACKENDS " == *" cuda "* ]]; then
    if [ "$NGPU" -ge 1 ]; then run_one "$name" "$file" "$ms" cuda 1 1 "$shape"; fi
    if [ "$NGPU" -ge 2 ]; then run_one "$name" "$file" "$ms" cuda 1 2 "$shape"; fi
  fi
}

for s in $SETS; do
  case $s in
    t10) run_set T10I4D100K "$SHARED/data/fca/T10I4D100K.dat" 0 t10;;
    mushroom) run_set mushroom "$SHARED/data/fca/mushroom.dat" 0 mushroom;;
    chess816) run_set chess "$SHARED/data/fca/chess.dat" 816 chess816;;
    chess-[0-9]*) run_set chess "$SHARED/data/fca/chess.dat" "${s#chess-}" "$s";;
    synth68k|synth68k-[0-9]*|synth68k-full)
      [ -e "$tmp/s68k.dat" ] || "$BIN" gen context --objects 68000 --attributes 412 --density 0.11 --seed 1 -o "$tmp/s68k.dat"
      case $s in
        synth68k) run_set synth-68k "$tmp/s68k.dat" 68 "$s";;
        synth68k-full) run_set synth-68k "$tmp/s68k.dat" 0 "$s";;
        *) run_set synth-68k "$tmp/s68k.dat" "${s#synth68k-}" "$s";;
      esac;;
    *) echo "bench/gpu-lattice.sh: unknown set $s" >&2; exit 2;;
  esac
done
