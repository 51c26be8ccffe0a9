#!/usr/bin/env bash
# What a user of a GPU machine feels: the wall time of whole commands
# that write their result (-o), start to exit, median of --reps, each
# backend alternating with the others.  lattice: FIMI files of --shared
# (T10I4D100K, mushroom; chess at --min-support 500 without the one
# thread) on cuda, auto, and the CPU on 1 thread and on every core; dpc: 10M 2-D blobs (gen blobs --clusters 50, 30
# neighbours, 50 centres) on cuda, with -o and without.  --stats of the
# last run of each goes to the log (--log DIR).  Appends rows to
# bench/results/gpu-end-to-end.csv; rows of another machine or another
# day are not comparable (rerun the baseline in the same call).
# --gpu-backend cpu dry-runs the script on a machine without a GPU.
# --ab "VAR=A VAR=B" runs each GPU command once with each setting in turn
# (the A/B of a knob, FD_GPU_RELEASE say), the setting in the row's
# setting column.
#
#   bench/gpu-end-to-end.sh [--bin PATH] [--shared DIR] [--reps 3] [--only lattice|dpc] [--log DIR] [--csv FILE]
#                           [--gpu-backend cuda] [--ab "VAR=A VAR=B"]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; SHARED=$here/../../shared; REPS=3; ONLY=""; LOG=""
CSV=$here/results/gpu-end-to-end.csv
GB=cuda; AB=""
bench_options 2,17 "--bin=BIN --shared=SHARED --reps=REPS --only=ONLY --log=LOG --csv=CSV --gpu-backend=GB --ab=AB" "$@"
gpu_machine
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
LOG=${LOG:-$tmp}; mkdir -p "$LOG"
header="command,backend,setting,seconds,runs,machine,date,version"
csv_open "$CSV" "$header"
version=$(bin_version "$BIN")
declare -A t=()
# label | arguments (the output directory is added)
cases=()
if [ "$ONLY" != dpc ]; then
  # file [options]: chess at support 500 (45.7 M concepts) is a case
  # where the GPU has work after its start; one thread takes it 15 s.
  for spec in T10I4D100K mushroom "chess --min-support 500"; do
    f=${spec%% *} opt=${spec#"${spec%% *}"}
    [ -e "$SHARED/data/fca/$f.dat" ] || { echo "note: $SHARED/data/fca/$f.dat is absent, skipped"; continue; }
    bes=("$GB" auto "cpu -t 1" "cpu -t $(nproc)")
    [ -n "$opt" ] && bes=("$GB" auto "cpu -t $(nproc)")
    for be in "${bes[@]}"; do
      cases+=("lattice $spec|$be|lattice $SHARED/data/fca/$f.dat$opt --backend $be -o $tmp/out --force -q")
    done
  done
fi
if [ "$ONLY" != lattice ]; then
  "$BIN" gen blobs --n 10000000 --dims 2 --clusters 50 --seed 1 -o "$tmp/b10m.npy" > /dev/null || exit 1
  cases+=("dpc 10M blobs -o|$GB|dpc $tmp/b10m.npy --neighbors 30 --centers 50 --backend $GB -o $tmp/out --force -q")
  cases+=("dpc 10M blobs|$GB|dpc $tmp/b10m.npy --neighbors 30 --centers 50 --backend $GB -q")
fi
# Each GPU case once per --ab setting: "label|backend SETTING|args", run
# under env SETTING.
if [ -n "$AB" ]; then
  all=()
  for c in "${cases[@]}"; do
    rest=${c#*|}
    if [ "${rest%%|*}" = "$GB" ]; then
      for v in $AB; do all+=("${c%%|*}|$GB $v|${rest#*|}"); done
    else
      all+=("$c")
    fi
  done
  cases=("${all[@]}")
fi
# env SETTING of a case, if any, before its arguments.
setting() { local be=${1#*|}; be=${be%%|*}; [ "$be" != "${be#* *=}" ] && echo "${be#* }"; }
for r in $(seq "$REPS"); do
  for c in "${cases[@]}"; do
    read -r -a args <<< "${c##*|}"
    read -r -a envs <<< "$(setting "$c")"
    t0=$(date +%s%N)
    env "${envs[@]}" "$BIN" "${args[@]}" > /dev/null 2> "$tmp/err" || { echo "bench/gpu-end-to-end.sh: ${c##*|}: $(tail -2 "$tmp/err")" >&2; exit 1; }
    t1=$(date +%s%N)
    t[$c]="${t[$c]:-} $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", (b - a) / 1e9}')"
  done
done
for c in "${cases[@]}"; do
  label=${c%%|*} rest=${c#*|}; be=${rest%%|*}
  read -r -a args <<< "${rest#*|}"
  read -r -a envs <<< "$(setting "$c")"
  env "${envs[@]}" "$BIN" "${args[@]/-q/--stats}" > /dev/null 2> "$LOG/$(echo "$label $be" | tr ' /' '__').stats" || true
  set_=$(setting "$c")
  echo "\"$label\",\"${be%% *=*}\",\"$set_\",$(printf '%s\n' ${t[$c]} | median),\"${t[$c]# }\",\"$MACHINE\",$(date -u +%F),$version" |
    tee -a "$CSV"
done
