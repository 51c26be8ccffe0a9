#!/usr/bin/env bash
# The input hash's cache (src/common/hashcache.h), end to end: the wall
# time of whole commands on large binary inputs with FD_HASH_CACHE=off
# (every run hashes the file: one thread, about 1.1 GB/s) and on (the
# digest from the entry the first run left), alternating, median of
# --reps.  Inputs: a 100^4 float32 tensor (400 MB, bench/bcp_big_tensor.py;
# with --f64 a standard normal float64 one of 800 MB, numpy's) for
# `bcp --rank 16 --max-iter 1 --tol 0` (the command of
# bench/results/bcp-gpu-history.txt's load rows), and 10M 2-D blobs
# (160 MB) for `dpc`.
# Every run writes its result (-o): the digest goes into it.  The cache
# lives in a scratch directory.  Appends to bench/results/hash-cache.csv.
#
#   bench/hash-cache.sh [--bin PATH] [--reps 5] [--threads T] [--backend cpu] [--only bcp|dpc] [--f64] [--csv FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; REPS=5; T=$(nproc); BE=cpu; ONLY=""; F64=""; CSV=$here/results/hash-cache.csv
bench_options 2,14 "--bin=BIN --reps=REPS --threads=T --backend=BE --only=ONLY --f64=F64! --csv=CSV" "$@"
gpu_machine
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export FD_HASH_CACHE_DIR=$tmp/cache
cases=()
if [ "$ONLY" != dpc ]; then
  dt=32
  if [ -n "$F64" ]; then
    dt=64
    python3 -c "import numpy as np; np.save('$tmp/t.npy', np.random.default_rng(1).standard_normal((100,) * 4))" || exit 1
  else
    python3 "$here/bcp_big_tensor.py" "$tmp/t.npy" 100x100x100x100 > /dev/null || exit 1
  fi
  cases+=("bcp 100^4 float$dt|bcp $tmp/t.npy --rank 16 --max-iter 1 --tol 0 --backend $BE")
fi
if [ "$ONLY" != bcp ]; then
  "$BIN" gen blobs --n 10000000 --dims 2 --clusters 50 --seed 1 -o "$tmp/b.npy" > /dev/null || exit 1
  cases+=("dpc 10M 2-D|dpc $tmp/b.npy --neighbors 30 --centers 50 --backend $BE")
fi
sleep 2.5 # the cache keeps files that changed 2 s or more before their hash
version=$(bin_version "$BIN")
[ -f "$CSV" ] || echo "command,backend,hash_cache,bytes,seconds,runs,threads,machine,date,version" > "$CSV"
declare -A t=()
for c in "${cases[@]}"; do # the entries, and the page cache warm
  read -r -a args <<< "${c#*|}"
  "$BIN" "${args[@]}" -t "$T" -o "$tmp/out" --force -q || exit 1
done
for r in $(seq "$REPS"); do
  for c in "${cases[@]}"; do
    for hc in off on; do
      read -r -a args <<< "${c#*|}"
      t0=$(date +%s%N)
      FD_HASH_CACHE=$hc "$BIN" "${args[@]}" -t "$T" -o "$tmp/out" --force -q || exit 1
      t1=$(date +%s%N)
      t[$c $hc]="${t[$c $hc]:-} $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", (b - a) / 1e9}')"
    done
  done
done
for c in "${cases[@]}"; do
  read -r -a args <<< "${c#*|}"
  for hc in off on; do
    echo "\"${c%%|*}\",$BE,$hc,$(stat -c %s "${args[1]}"),$(printf '%s\n' ${t[$c $hc]} | median),\"${t[$c $hc]# }\",$T,\"$MACHINE\",$(date -u +%F),$version" |
      tee -a "$CSV"
  done
done
