#!/usr/bin/env bash
# What checkpoints cost a short lattice run as threads grow: mushroom (or
# FILE) with -o, the default checkpoints (300 s) against none (0), at 1, 2,
# 4, 8 and 16 threads, two runs each, and without output; whole-job
# seconds from the summary line.  Prints; results/lattice-threads-checkpoints.txt
# holds a run on the one-GPU machine's 16 cores.
#
#   bench/lattice-threads-ckpt.sh [--bin PATH] [FILE.dat]
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=$here/../build/fcbo-dist; F=$here/../../shared/data/fca/mushroom.dat
while [ $# -gt 0 ]; do
  case $1 in
    --bin) B=$2; shift 2;;
    -h|--help) sed -n '2,8p' "$0"; exit 0;;
    -*) echo "bench/lattice-threads-ckpt.sh: unknown option $1" >&2; exit 2;;
    *) F=$1; shift;;
  esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fcbo-thr.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
for t in 1 2 4 8 16; do
  for ck in 300 0; do
    for _ in 1 2; do
      "$B" lattice "$F" --backend cpu -t $t -o "$tmp/o" --force --checkpoint-seconds $ck 2>&1 |
        awk -v t=$t -v ck=$ck '/concepts in/ {printf "-o -t %2d --checkpoint-seconds %3d: total %s s\n", t, ck, $4}'
    done
  done
  "$B" lattice "$F" --backend cpu -t $t 2>&1 | awk -v t=$t '/concepts in/ {printf "(no output) -t %2d: total %s s\n", t, $4}'
done
