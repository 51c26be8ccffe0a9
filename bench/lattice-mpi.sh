#!/usr/bin/env bash
# Strong scaling of `mpirun -np P fcbo-dist lattice` on one synthetic
# context: wall time (median of --reps), speed-up and parallel efficiency
# against P = 1, and per-rank busy/idle seconds with the load imbalance
# (max busy / mean busy).  Writes parts and master into a scratch
# directory, as users do.  Appends rows to bench/results/lattice-mpi.csv.
#
#   bench/lattice-mpi.sh [--np "1 2 4"] [--threads 1] [--reps 3] [--objects 5000]
#                        [--attributes 50] [--density 0.3] [--launch mpirun|srun]
#                        [--bin PATH] [--csv FILE] [--machine NAME] [--scratch DIR]
#
# jobs/scaling.sbatch runs this under SLURM with --launch srun.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist
NPS="1 2 4"; T=1; REPS=3; OBJ=5000; ATTR=50; DENS=0.3; LAUNCH=mpirun
CSV=$here/results/lattice-mpi.csv; SCRATCH=${TMPDIR:-/tmp}
MACHINE="$(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
bench_options 2,13 "--np=NPS --threads=T --reps=REPS --objects=OBJ --attributes=ATTR --density=DENS --launch=LAUNCH --bin=BIN --csv=CSV --machine=MACHINE --scratch=SCRATCH" "$@"
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
tmp=$(mktemp -d "$SCRATCH/fcbo-bench.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
cores=$(nproc)
version=$("$BIN" version | head -1 | cut -d' ' -f2)
ctx=$tmp/ctx.dat
"$BIN" gen context --objects "$OBJ" --attributes "$ATTR" --density "$DENS" --seed 1 -o "$ctx"
[ -f "$CSV" ] || echo "objects,attributes,density,concepts,ranks,threads,seconds,speedup,efficiency,imbalance,busy_s,idle_s,launcher,machine,date,version" > "$CSV"

launch() { # np
  if [ "$LAUNCH" = srun ]; then
    echo "srun --mpi=pmix -n $1 --cpus-per-task=$T"
  elif [ $(($1 * T)) -le "$cores" ]; then
    echo "mpirun -np $1 --map-by slot:PE=$T --bind-to core"
  else
    echo "mpirun -np $1 --oversubscribe --bind-to none"
  fi
}

base=
for np in $NPS; do
  times=(); best_err=
  for r in $(seq "$REPS"); do
    rm -rf "$tmp/out"
    # shellcheck disable=SC2046
    $(launch "$np") "$BIN" lattice "$ctx" -o "$tmp/out" -t "$T" --stats 2> "$tmp/err" > /dev/null
    s=$(sed -n 's/.* concepts in \([0-9.]*\) s .*/\1/p' "$tmp/err")
    times+=("$s|$r")
    cp "$tmp/err" "$tmp/err.$r"
  done
  # the median run, with its own per-rank table
  med=$(printf '%s\n' "${times[@]}" | sort -t'|' -k1,1g | sed -n "$(( (REPS + 1) / 2 ))p")
  secs=${med%|*}; err=$tmp/err.${med#*|}
  concepts=$(sed -n 's/^\([0-9]*\) concepts in .*/\1/p' "$err")
  busy=$(awk '$1 ~ /^[0-9]+$/ && NF == 5 {printf "%s%s", s, $4; s=";"}' "$err")
  idle=$(awk '$1 ~ /^[0-9]+$/ && NF == 5 {printf "%s%s", s, $5; s=";"}' "$err")
  imb=$(sed -n 's/^load imbalance (max busy \/ mean busy) //p' "$err")
  [ -n "$base" ] || base=$secs
  speed=$(awk -v b="$base" -v s="$secs" 'BEGIN{printf "%.3f", b / s}')
  eff=$(awk -v b="$base" -v s="$secs" -v p="$np" -v p0="${NPS%% *}" 'BEGIN{printf "%.3f", b * p0 / (s * p)}')
  echo "np=$np: $concepts concepts in $secs s, speed-up $speed, efficiency $eff, imbalance $imb"
  echo "$OBJ,$ATTR,$DENS,$concepts,$np,$T,$secs,$speed,$eff,$imb,$busy,$idle,$LAUNCH,\"$MACHINE\",$(date +%F),$version" >> "$CSV"
done
