#!/usr/bin/env bash
# Kernel variants side by side in one call: each --variant NAME=FILE is the
# working tree with --file (default src/spearman/spearman_gpu.cu) replaced by
# FILE (FILE . is the working tree as it is, as is a variant named tree
# whatever FILE says), built on its own (the
# fcbo-dist target, all builds at once), then every variant runs every mode
# on the same matrix (`gen counts --rows N --cols C --groups 50 --seed 1`,
# C = 30 unless --cols),
# the variants taking turns within each repetition so that a drift of the
# machine (clocks, heat) falls on all of them alike.  Times are pass 1 from
# `--stats` (the counting pass; reading the matrix excluded); for top-k10,
# whose pass 1 is empty (its heaps fill in the pass after it), that pass.  Every variant
# must select the same number of pairs in a mode: a difference is reported
# and the exit status is 1.  The modes are bench/gpu-spearman.sh's
# (spearman_mode_args in bench/lib.sh; those that write, into a scratch
# folder).  --env NAME=VAR=VALUE sets VAR for variant NAME's runs (FD_GPU_STRIP
# and the other knobs); variants of the same FILE share one build, so that
# `--variant s16=. --variant s32=. --env s32=FD_GPU_STRIP=32` builds once.
# Prints a row a run (variant, mode,
# rep, rows, pass1_s, selected, machine, date), appended to --csv FILE if
# given, then each variant's median a mode and its ratio to the first
# variant's.  --cmake-args go to every configure (-DFD_WITH_CUDA=OFF with
# --backend cpu times variants of a CPU file, or tries the script on a
# machine without a GPU).
#
#   bench/gpu-spearman-ab.sh --variant NAME=FILE [--variant ...] [--env NAME=VAR=VALUE ...]
#                            [--file PATH] [--rows 2000000] [--cols 30]
#                            [--modes "count-only-p1e-12 count-only"] [--reps 2] [--backend cuda]
#                            [--cuda-arch 90] [--cmake-args "..."] [--csv FILE] [--keep DIR]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"
FILE=src/spearman/spearman_gpu.cu; ROWS=2000000; COLS=30; MODES="count-only-p1e-12 count-only"; REPS=2
BACKEND=cuda; ARCH=90; CMARGS=; CSV=; KEEP=; NAMES=(); SRCS=(); declare -A ENVS=() BUILD=()
gpu_machine
die() { echo "bench/gpu-spearman-ab.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --variant) [[ $2 == ?*=?* ]] || die "--variant wants NAME=FILE, got '$2'"
      NAMES+=("${2%%=*}"); SRCS+=("${2#*=}"); shift 2;;
    --env) [[ $2 == ?*=[A-Za-z_]*=* ]] || die "--env wants NAME=VAR=VALUE, got '$2'"
      ENVS[${2%%=*}]+="${ENVS[${2%%=*}]:+ }${2#*=}"; shift 2;;
    --file) FILE=$2; shift 2;; --rows) ROWS=$2; shift 2;; --cols) COLS=$2; shift 2;; --modes) MODES=$2; shift 2;;
    --reps) REPS=$2; shift 2;; --backend) BACKEND=$2; shift 2;; --cuda-arch) ARCH=$2; shift 2;;
    --csv) CSV=$2; shift 2;; --keep) KEEP=$2; shift 2;; --cmake-args) CMARGS=$2; shift 2;;
    -h|--help) sed -n '2,29p' "$0"; exit 0;;
    *) die "unknown option $1";;
  esac
done
[ ${#NAMES[@]} -gt 0 ] || die "no --variant (tree=. is the working tree as it is)"
[ -f "$root/$FILE" ] || die "--file $FILE is not a file of the working tree"
[[ $ROWS =~ ^[0-9]+$ && $ROWS -ge 2 ]] || die "--rows wants a count of at least 2, got '$ROWS'"
[[ $COLS =~ ^[0-9]+$ && $COLS -ge 2 ]] || die "--cols wants a count of at least 2, got '$COLS'"
[[ $REPS =~ ^[0-9]+$ && $REPS -ge 1 ]] || die "--reps wants a positive count, got '$REPS'"
for mode in $MODES; do
  spearman_mode_args "$mode" . || die "unknown mode $mode"
done
for i in "${!NAMES[@]}"; do
  n=${NAMES[$i]} s=${SRCS[$i]}
  [[ $n =~ ^[A-Za-z0-9_.-]+$ ]] || die "variant name '$n': letters, digits, '.', '_' and '-' only"
  for j in "${!NAMES[@]}"; do [ "$j" -lt "$i" ] && [ "${NAMES[$j]}" = "$n" ] && die "variant '$n' named twice"; done
  [ "$n" = tree ] && SRCS[$i]=. s=.
  [ "$s" = . ] || [ -f "$s" ] || die "variant $n: no file $s"
  [ "$s" = . ] || SRCS[$i]=$(cd "$(dirname "$s")" && pwd)/$(basename "$s")
  BUILD[$n]=$n
  for j in "${!NAMES[@]}"; do
    [ "$j" -lt "$i" ] && [ "${SRCS[$j]}" = "${SRCS[$i]}" ] && { BUILD[$n]=${BUILD[${NAMES[$j]}]}; break; }
  done
done
for n in "${!ENVS[@]}"; do
  [ -n "${BUILD[$n]:-}" ] || die "--env for $n, which is no --variant"
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
tmp=${KEEP:-$(mktemp -d)}; mkdir -p "$tmp" || die "cannot make $tmp"
[ -n "$KEEP" ] || trap 'rm -rf "$tmp"' EXIT

# The working tree's files that git tracks or would track, so that no
# build folder or scratch of the tree travels into the copies.
(cd "$root" && git ls-files -co --exclude-standard -z) > "$tmp/files" || die "not a git working tree: $root"
builds=$(printf '%s\n' "${BUILD[@]}" | sort -u | wc -l)
jobs=$(( $(nproc) / builds )); [ "$jobs" -ge 1 ] || jobs=1
t0=$(date +%s)
for i in "${!NAMES[@]}"; do
  n=${NAMES[$i]} src=$tmp/src-${NAMES[$i]}
  [ "${BUILD[$n]}" = "$n" ] || continue
  (
    mkdir -p "$src" && (cd "$root" && tar --null -T "$tmp/files" -cf - 2> /dev/null) | tar -xf - -C "$src" &&
      { [ "${SRCS[$i]}" = . ] || cp "${SRCS[$i]}" "$src/$FILE"; } &&
      cmake -S "$src" -B "$tmp/build-$n" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
        $CMARGS > "$tmp/build-$n.log" 2>&1 &&
      cmake --build "$tmp/build-$n" -j"$jobs" --target fcbo-dist >> "$tmp/build-$n.log" 2>&1
  ) &
done
wait
for n in "${NAMES[@]}"; do
  b=${BUILD[$n]}
  [ -x "$tmp/build-$b/fcbo-dist" ] || { tail -20 "$tmp/build-$b.log" >&2; die "variant $n did not build ($tmp/build-$b.log)"; }
done
echo "# built $builds of ${#NAMES[@]} variants in $(( $(date +%s) - t0 )) s; $MACHINE; $ROWS x $COLS" >&2
for n in "${NAMES[@]}"; do
  [ -n "${ENVS[$n]:-}" ] && echo "# $n runs with ${ENVS[$n]}" >&2
done
"$tmp/build-${BUILD[${NAMES[0]}]}/fcbo-dist" gen counts --rows "$ROWS" --cols "$COLS" --groups 50 --seed 1 -o "$tmp/m.npy" > /dev/null ||
  die "gen counts failed"

# variant mode -> "pass1_s selected", or nothing when the run failed
one() {
  spearman_mode_args "$2" "$tmp/out"
  env ${ENVS[$1]:-} "$tmp/build-${BUILD[$1]}/fcbo-dist" spearman "$tmp/m.npy" "${SPEARMAN_ARGS[@]}" --backend "$BACKEND" --stats > "$tmp/out.txt" 2>&1 < /dev/null ||
    { echo "failed: $1 $2: $(tail -2 "$tmp/out.txt")" >&2; rm -rf "$tmp/out"; return; }
  rm -rf "$tmp/out"
  local l p r sel
  read -r l p r < <(spearman_stats_times "$tmp/out.txt")
  sel=$(sed -n 's/^\([0-9]*\) of [0-9]* pairs.*/\1/p' "$tmp/out.txt" | head -1)
  [ "$2" = top-k10 ] && p=$r
  [ -n "$p" ] && echo "$p ${sel:-?}"
}

[ -n "$CSV" ] && [ ! -s "$CSV" ] && echo "variant,mode,rep,rows,pass1_s,selected,machine,date" > "$CSV"
echo "variant,mode,rep,rows,pass1_s,selected"
status=0
: > "$tmp/runs"
for rep in $(seq 1 "$REPS"); do
  for n in "${NAMES[@]}"; do
    for mode in $MODES; do
      r=$(one "$n" "$mode"); [ -n "$r" ] || { status=1; continue; }
      set -- $r
      echo "$n,$mode,$rep,$ROWS,$1,$2"
      echo "$n $mode $1 $2" >> "$tmp/runs"
      [ -n "$CSV" ] && echo "$n,$mode,$rep,$ROWS,$1,$2,\"$MACHINE\",$(date -u +%F)" >> "$CSV"
    done
  done
done

echo "# median pass 1 seconds (ratio to ${NAMES[0]})"
for mode in $MODES; do
  sels=$(awk -v m="$mode" '$2 == m {print $4}' "$tmp/runs" | sort -u | wc -l)
  if [ "$sels" -gt 1 ]; then
    echo "# $mode: the variants selected different numbers of pairs:" >&2
    awk -v m="$mode" '$2 == m {print "#   " $1 " " $4}' "$tmp/runs" | sort -u >&2
    status=1
  fi
  base=$(awk -v m="$mode" -v n="${NAMES[0]}" '$1 == n && $2 == m {print $3}' "$tmp/runs" | median)
  for n in "${NAMES[@]}"; do
    med=$(awk -v m="$mode" -v n="$n" '$1 == n && $2 == m {print $3}' "$tmp/runs" | median)
    [ -n "$med" ] || continue
    awk -v n="$n" -v m="$mode" -v t="$med" -v b="${base:-0}" \
      'BEGIN{printf "# %-14s %-18s %8.3f s  %s\n", n, m, t, (b > 0 ? sprintf("%.3f", t / b) : "-")}'
  done
done
exit $status
