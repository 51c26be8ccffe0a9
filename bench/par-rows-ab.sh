#!/usr/bin/env bash
# par_rows by our kept thread team (src/common/par_rows_team.c, the
# default) against OpenMP (par_rows_omp.c, -DFD_PAR_ROWS=openmp): both
# built from the working tree without CUDA in --scratch, then dpc and
# bcp runs timed side by side (bench/startup.sh: alternating, the median
# of --reps), rows appended to --csv.  Issue #38 asked which is faster:
# they tie on the dev VM (bench/results/ab.csv, labels par-team and
# par-openmp); the team stays, as ThreadSanitizer cannot follow libgomp's
# synchronisation and the readers need its start/finish split.
#
#   bench/par-rows-ab.sh [--reps 7] [--threads 2] [--scratch DIR] [--csv FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
root=$(cd "$here/.." && pwd)
REPS=7; T=2; SCRATCH=${TMPDIR:-/tmp}/fcbo-par-ab; CSV=$here/results/ab.csv
die() { echo "bench/par-rows-ab.sh: $*" >&2; exit 2; }
bench_options 2,12 "--reps=REPS --threads=T --scratch=SCRATCH --csv=CSV" "$@"
[[ $REPS =~ ^[0-9]+$ && $REPS -ge 1 ]] || die "--reps wants a positive count, got '$REPS'"
[[ $T =~ ^[0-9]+$ && $T -ge 1 ]] || die "--threads wants a positive count, got '$T'"
mkdir -p "$SCRATCH"
for v in team openmp; do
  cmake -S "$root" -B "$SCRATCH/build-$v" -DCMAKE_BUILD_TYPE=Release -DFD_WITH_CUDA=OFF -DFD_PAR_ROWS=$v \
    > "$SCRATCH/build-$v.log" 2>&1 && cmake --build "$SCRATCH/build-$v" -j"$(nproc)" --target fcbo-dist \
    >> "$SCRATCH/build-$v.log" 2>&1 || die "building the $v variant failed: $SCRATCH/build-$v.log"
done
B=$SCRATCH/build-team/fcbo-dist
"$B" gen blobs --n 200000 --dims 2 --clusters 20 --seed 1 -o "$SCRATCH/p.npy" > /dev/null
"$B" gen tensor --shape 30x30x30 --rank 3 --seed 1 -o "$SCRATCH/t30.npy"
"$B" gen tensor --shape 200x200x200 --rank 5 --seed 1 -o "$SCRATCH/t200.npy"
for cmd in "dpc $SCRATCH/p.npy --centers 20 -o $SCRATCH/dpc --force -q -t $T" \
           "bcp $SCRATCH/t30.npy --rank 16 --init random --max-iter 1000 --tol 0 -o $SCRATCH/b30 --force -q -t $T" \
           "bcp $SCRATCH/t200.npy --rank 16 -o $SCRATCH/b200 --force -q -t $T"; do
  bash "$here/startup.sh" --reps "$REPS" --bin "$SCRATCH/build-team/fcbo-dist:par-team" \
    --bin "$SCRATCH/build-openmp/fcbo-dist:par-openmp" --cmd "$cmd" --csv "$CSV"
done
