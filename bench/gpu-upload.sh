#!/usr/bin/env bash
# Loading a large input onto one GPU, end to end, under each setting of
# FD_GPU_UPLOAD (staged: through a small pinned ring, src/cuda/upload.c;
# pageable: a plain cudaMemcpy), alternating, median of --reps:
#   bcp: a 100^4 float64 tensor (800 MB, gen tensor --rank 16), --rank 16
#        --max-iter 1 --tol 0 -o DIR, its first run not timed (the page
#        cache, the input hash's cache entry);
#   dpc: 10M 2-D blobs (160 MB), --neighbors 30 --centers 50 -o DIR.
# Columns: the copy to the device (FD_GPU_VERBOSE's line), the job's read
# and setup (the load, what the bytes take to be on the GPU and ready:
# --stats), its GB/s, and the command's wall; the last run's standard
# error of each in --log DIR (FD_GPU_VERBOSE's steps).  Appends rows to
# bench/results/gpu-upload.csv.  --gpu-backend cpu dry-runs the script
# (no copy is timed then).
#
#   bench/gpu-upload.sh [--bin PATH] [--reps 5] [--only bcp|dpc] [--log DIR] [--csv FILE] [--gpu-backend cuda]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; REPS=5; ONLY=""; LOG=""; CSV=$here/results/gpu-upload.csv; GB=cuda
bench_options 2,16 "--bin=BIN --reps=REPS --only=ONLY --log=LOG --csv=CSV --gpu-backend=GB" "$@"
gpu_machine
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
LOG=${LOG:-$tmp}; mkdir -p "$LOG"
header="workload,bytes,upload,copy_ms,load_s,load_gb_s,wall_s,runs,machine,date,version"
csv_open "$CSV" "$header"
version=$(bin_version "$BIN")
export FD_HASH_CACHE_DIR=$tmp/hash-cache
cases=()
if [ "$ONLY" != dpc ]; then
  "$BIN" gen tensor --shape 100x100x100x100 --rank 16 --seed 1 -o "$tmp/t.npy" > /dev/null || exit 1
  cases+=("bcp|$tmp/t.npy|bcp $tmp/t.npy --rank 16 --max-iter 1 --tol 0 --backend $GB -o $tmp/out --force --stats")
fi
if [ "$ONLY" != bcp ]; then
  "$BIN" gen blobs --n 10000000 --dims 2 --clusters 50 --seed 1 -o "$tmp/b.npy" > /dev/null || exit 1
  cases+=("dpc|$tmp/b.npy|dpc $tmp/b.npy --neighbors 30 --centers 50 --backend $GB -o $tmp/out --force --stats")
fi
# "copy_ms load_s" of a run's standard error.
times_of() {
  awk '/gpu: [0-9.]* MB to the device \((staged|pageable)\) in/ { for (i = 1; i < NF; i++) if ($(i + 1) == "ms") c = $i }
       /^read [0-9.]* s .*setup [0-9.]* s/ { r = $2; for (i = 1; i < NF; i++) if ($i == "setup") s = $(i + 1) }
       END { printf "%s %.3f\n", c == "" ? "NA" : c, r + s }' "$1"
}
declare -A copy=() load=() wall=()
for c in "${cases[@]}"; do
  read -r -a args <<< "${c##*|}"
  "$BIN" "${args[@]}" > /dev/null 2>&1 || { echo "bench/gpu-upload.sh: ${c##*|} failed" >&2; exit 1; }
done
for r in $(seq "$REPS"); do
  for c in "${cases[@]}"; do
    read -r -a args <<< "${c##*|}"
    for mode in staged pageable; do
      t0=$(date +%s%N)
      FD_GPU_UPLOAD=$mode FD_GPU_VERBOSE=1 "$BIN" "${args[@]}" > /dev/null 2> "$tmp/err" ||
        { echo "bench/gpu-upload.sh: ${c##*|}: $(tail -2 "$tmp/err")" >&2; exit 1; }
      t1=$(date +%s%N)
      read -r cm ls <<< "$(times_of "$tmp/err")"
      cp "$tmp/err" "$LOG/${c%%|*}-$mode.err"
      k="${c%%|*} $mode"
      copy[$k]="${copy[$k]:-} $cm" load[$k]="${load[$k]:-} $ls"
      wall[$k]="${wall[$k]:-} $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", (b - a) / 1e9}')"
    done
  done
done
for c in "${cases[@]}"; do
  w=${c%%|*} f=${c#*|}; f=${f%%|*}
  bytes=$(stat -c %s "$f")
  for mode in staged pageable; do
    k="$w $mode"
    cm=$(printf '%s\n' ${copy[$k]} | median) ls=$(printf '%s\n' ${load[$k]} | median)
    wm=$(printf '%s\n' ${wall[$k]} | median)
    gbs=$(awk -v b="$bytes" -v s="$ls" 'BEGIN{printf "%.2f", (s > 0 ? b / s / 1e9 : 0)}')
    echo "$w,$bytes,$mode,$cm,$ls,$gbs,$wm,\"load${load[$k]}; copy${copy[$k]}\",\"$MACHINE\",$(date -u +%F),$version" | tee -a "$CSV"
  done
done
