#!/usr/bin/env bash
# A/B of a change against an earlier commit, end to end: builds --base REV
# (a git worktree of it, CPU backends only, in --scratch) next to the
# working tree's build/, then times `fcbo-dist ARGS` with both binaries,
# alternating, the median of --reps runs each (bench/startup.sh does the
# timing), and appends the rows to --csv (bench/results/ab.csv).  ARGS
# may write: give -o DIR --force, or --count-only.  The library swaps of
# issue #38 were measured with it (bench/results/ab.csv names each swap's
# commits).
#
#   bench/ab.sh --base REV --cmd "ARGS" [--reps 7] [--np 1] [--label NAME] [--scratch DIR] [--csv FILE]
# (--np N: each run under mpirun -np N, as bench/startup.sh --np)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
root=$(cd "$here/.." && pwd)
BASE=; CMD=; REPS=7; NP=1; LABEL=; SCRATCH=${TMPDIR:-/tmp}/fcbo-ab; CSV=$here/results/ab.csv
die() { echo "bench/ab.sh: $*" >&2; exit 2; }
bench_options 2,12 "--base=BASE --cmd=CMD --reps=REPS --np=NP --label=LABEL --scratch=SCRATCH --csv=CSV" "$@"
case $LABEL in *[,\"]*) echo "bench/ab.sh: --label goes into a CSV field unquoted: no commas or quotes" >&2; exit 2;; esac
[ -n "$BASE" ] || die "--base REV is required"
[ -n "$CMD" ] || die "--cmd \"ARGS\" is required"
[[ $REPS =~ ^[0-9]+$ && $REPS -ge 1 ]] || die "--reps wants a positive count, got '$REPS'"
rev=$(git -C "$root" rev-parse --short "$BASE" 2> /dev/null) || die "--base $BASE is not a commit"
head=$(git -C "$root" rev-parse --short HEAD)
dirty=$(git -C "$root" status --porcelain --untracked-files=no | head -1)
[ -x "$root/build/fcbo-dist" ] || die "no build/fcbo-dist: run tools/build.sh first"
wt=$SCRATCH/src-$rev bd=$SCRATCH/build-$rev
if [ ! -x "$bd/fcbo-dist" ]; then
  rm -rf "$wt"
  git -C "$root" worktree add --detach "$wt" "$rev" > /dev/null 2>&1 || die "cannot check out $rev in $wt"
  cmake -S "$wt" -B "$bd" -DCMAKE_BUILD_TYPE=Release -DFD_WITH_CUDA=OFF > "$SCRATCH/build-$rev.log" 2>&1 &&
    cmake --build "$bd" -j"$(nproc)" --target fcbo-dist >> "$SCRATCH/build-$rev.log" 2>&1 ||
    { git -C "$root" worktree remove --force "$wt"; die "building $rev failed: $SCRATCH/build-$rev.log"; }
  git -C "$root" worktree remove --force "$wt"
fi
after="$head${dirty:++}"
bash "$here/startup.sh" --reps "$REPS" --bin "$bd/fcbo-dist:$rev" --bin "$root/build/fcbo-dist:${LABEL:-$after}" \
  --cmd "$CMD" --np "$NP" --csv "$CSV"
