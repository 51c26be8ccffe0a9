#!/usr/bin/env bash
# Strong scaling of `fcbo-dist lattice` and `fcbo-dist spearman` over P
# ranks, one rank per GPU (or per core group with --backend cpu): the
# same problem at every P, each run writing its parts and master to a
# scratch directory that is removed after it.  Problems (defaults: the
# sizes of the 8-GPU scaling issue):
#   lattice  synth: `gen context` of --synth "OBJECTS ATTRIBUTES DENSITY"
#            at --synth-support; chess: ../shared/data/fca/chess.dat at
#            --chess-support (the concepts are written: intents only)
#   spearman the zero-inflated count matrix of --rows x 30 (`gen counts
#            --groups 50 --seed 1`) with --pvalue 1e-12 -o (mode
#            p1e-12), the same with --no-histogram (p1e-12-nohist, not
#            in the default --modes) and --count-only (every pair binned,
#            none written; count-only-p1e-12 and count-only-fdr, --fdr
#            0.05, not in the default --modes either)
# Per run, one CSV row: wall seconds (the launcher's, process start to
# exit), the phases rank 0 reports (`--stats`; compute_s is pass 1 and,
# with --fdr, the cutoff's collecting pass), bytes written, per-rank
# busy and idle seconds from the master's /ranks (largest busy, mean
# busy, mean idle), throughput over the compute phases, and speed-up and
# efficiency against this call's run at the smallest P.  Rows go to
# --csv-dir/scaling-lattice.csv and scaling-spearman.csv;
# bench/scaling_plot.py draws them.  jobs/scaling.sbatch runs this under
# SLURM (--launch srun).
#
#   bench/scaling.sh [--np "1 2 4 8"] [--workloads "lattice spearman"]
#                    [--lattice "synth chess"] [--synth "20000 200 0.13"] [--synth-support 0]
#                    [--chess-support 300] [--rows 9879896] [--modes "p1e-12 count-only"]
#                    [--backend cuda] [--threads T] [--launch mpirun|srun] [--bin PATH]
#                    [--shared DIR] [--scratch DIR] [--csv-dir DIR] [--machine TEXT]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
# The GPU's own work is measured: a lone GPU rank's threads would begin
# the search while the GPU starts (FD_GPU_HOST_START, on by default).
export FD_GPU_HOST_START=off
NP="1 2 4 8"; WORK="lattice spearman"; LSETS="synth chess"; SYNTH="20000 200 0.13"; SYNTH_MS=0
CHESS_MS=300; ROWS=9879896; MODES="p1e-12 count-only"; BACKEND=cuda; THREADS=; LAUNCH=mpirun
BIN=$here/../build/fcbo-dist; SHARED=$here/../../shared; SCRATCH=; CSVDIR=$here/results; MACHINE=
while [ $# -gt 0 ]; do
  case $1 in
    --np) NP=$2; shift 2;; --workloads) WORK=$2; shift 2;; --lattice) LSETS=$2; shift 2;;
    --synth) SYNTH=$2; shift 2;; --synth-support) SYNTH_MS=$2; shift 2;; --chess-support) CHESS_MS=$2; shift 2;;
    --rows) ROWS=$2; shift 2;; --modes) MODES=$2; shift 2;; --backend) BACKEND=$2; shift 2;;
    --threads) THREADS=$2; shift 2;; --launch) LAUNCH=$2; shift 2;; --bin) BIN=$2; shift 2;;
    --shared) SHARED=$2; shift 2;; --scratch) SCRATCH=$2; shift 2;; --csv-dir) CSVDIR=$2; shift 2;;
    --machine) MACHINE=$2; shift 2;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0;;
    *) echo "bench/scaling.sh: unknown option $1" >&2; exit 2;;
  esac
done
case $LAUNCH in mpirun|srun) ;; *) echo "bench/scaling.sh: --launch mpirun or srun, not $LAUNCH" >&2; exit 2;; esac
[ -x "$BIN" ] || { echo "bench/scaling.sh: no binary at $BIN (build first, or --bin)" >&2; exit 2; }
python3 -c "import h5py" 2> /dev/null || { echo "bench/scaling.sh: needs python3 with h5py" >&2; exit 2; }
if [ -z "$MACHINE" ]; then
  GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1 || true)
  NGPU=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
  MACHINE="$(hostname -s): $(nproc) cores $(lscpu | sed -n 's/^Model name: *//p' | head -1), ${NGPU:-0} x ${GPU:-no GPU}"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
tmp=$(mktemp -d ${SCRATCH:+"$SCRATCH/scaling.XXXXXX"}); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2)
mkdir -p "$CSVDIR"
LCSV=$CSVDIR/scaling-lattice.csv; SCSV=$CSVDIR/scaling-spearman.csv
[ -f "$LCSV" ] || echo "problem,concepts,ranks,backend,wall_s,setup_s,compute_s,output_s,bytes,concepts_per_s,busy_max_s,busy_mean_s,idle_mean_s,speedup,efficiency,machine,date,version" > "$LCSV"
[ -f "$SCSV" ] || echo "problem,rows,pairs,ranks,backend,wall_s,load_s,compute_s,write_s,bytes,pairs_per_s,selected,busy_max_s,busy_mean_s,idle_mean_s,speedup,efficiency,machine,date,version" > "$SCSV"

# Runs "$@" on $1 ranks; sets $wall (seconds).  Fails on a non-zero exit
# (and the script then ends with status 1, after the other runs).
failed=0
launch() {
  local p=$1; shift
  local cmd=()
  if [ "$p" -gt 1 ] || [ "$LAUNCH" = srun ]; then
    if [ "$LAUNCH" = srun ]; then cmd=(srun --mpi=pmix --ntasks="$p" ${THREADS:+--cpus-per-task="$THREADS"})
    else cmd=(mpirun -np "$p" --bind-to none); fi
  fi
  local t0 t1; t0=$(date +%s.%N)
  "${cmd[@]}" "$BIN" "$@" --backend "$BACKEND" ${THREADS:+-t "$THREADS"} --stats 2> "$tmp/err" < /dev/null || {
    echo "failed on $p ranks: $BIN $*: $(tail -3 "$tmp/err")" >&2; failed=1; return 1; }
  t1=$(date +%s.%N)
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
}

# Largest busy, mean busy and mean idle seconds of the master's /ranks
# (empty for one rank, whose single file has no /ranks).
rank_times() {
  python3 - "$1" << 'EOF'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    if "ranks" not in f:
        print(",,")
    else:
        b, i = f["ranks/busy_seconds"][:], f["ranks/idle_seconds"][:]
        print("%.3f,%.3f,%.3f" % (b.max(), b.mean(), i.mean()))
EOF
}

# Speed-up of wall time $2 on $1 ranks against the smallest P's run
# ($base_t on $base_p ranks), and the efficiency, speed-up x base_p / P.
gain() {
  awk -v p="$1" -v t="$2" -v bp="$base_p" -v bt="$base_t" 'BEGIN{printf "%.3f,%.3f", bt / t, bt * bp / (t * p)}'
}

lattice_set() {  # name file support
  local name=$1 file=$2 ms=$3 p base_p= base_t=
  for p in $NP; do
    rm -rf "$tmp/out"
    launch "$p" lattice "$file" --min-support "$ms" -o "$tmp/out" || continue
    local concepts setup comp out bytes
    concepts=$(python3 -c "import h5py,sys; print(h5py.File(sys.argv[1],'r').attrs['n_concepts'])" "$tmp/out/lattice.h5")
    read -r setup comp out < <(sed -n 's/^setup \([0-9.]*\) s.*enumeration \([0-9.]*\) s.*output \([0-9.]*\) s$/\1 \2 \3/p' "$tmp/err")
    bytes=$(du -sb "$tmp/out" | cut -f1)
    [ -z "$base_p" ] && { base_p=$p; base_t=$wall; }
    echo "$name,$concepts,$p,$BACKEND,$wall,$setup,$comp,$out,$bytes,$(awk -v c="$concepts" -v s="$comp" 'BEGIN{printf "%.4g", c / s}'),$(rank_times "$tmp/out/lattice.h5"),$(gain "$p" "$wall"),\"$MACHINE\",$(date -u +%F),$version" | tee -a "$LCSV"
  done
  rm -rf "$tmp/out"
}

spearman_mode() {  # mode
  local mode=$1 p base_p= base_t= args=()
  case $mode in
    p1e-12) args=(--pvalue 1e-12);;
    p1e-12-nohist) args=(--pvalue 1e-12 --no-histogram);;
    count-only) args=(--count-only);;
    count-only-p1e-12) args=(--count-only --pvalue 1e-12);;
    count-only-fdr) args=(--count-only --fdr 0.05);;
    *) echo "bench/scaling.sh: unknown spearman mode $mode (p1e-12, p1e-12-nohist, count-only, count-only-p1e-12" \
         "or count-only-fdr)" >&2; failed=1; return;;
  esac
  local pairs=$((ROWS * (ROWS - 1) / 2))
  for p in $NP; do
    rm -rf "$tmp/out"
    launch "$p" spearman "$tmp/m.npy" "${args[@]}" -o "$tmp/out" || continue
    local attrs bytes
    attrs=$(python3 -c "
import h5py, sys
a = h5py.File(sys.argv[1], 'r').attrs
f = a.get('fdr_cutoff_seconds', 0.0)  # --fdr: the cutoff's pass counts as compute
if 'fdr_cutoff_seconds' in a: print('pass 1 %.3f s, the FDR cutoff %.3f s' % (a['pass1_seconds'], f), file=sys.stderr)
c = a['pass1_seconds'] + f + a['pass2_seconds']
print('%.3f,%.3f,%.3f,%.4g,%d' % (a['load_seconds'], a['pass1_seconds'] + f, a['pass2_seconds'], a['pairs_tested'] / c, a['n_pairs']))" "$tmp/out/spearman.h5")
    bytes=$(du -sb "$tmp/out" | cut -f1)
    [ -z "$base_p" ] && { base_p=$p; base_t=$wall; }
    echo "$mode,$ROWS,$pairs,$p,$BACKEND,$wall,${attrs%,*,*},$bytes,${attrs#*,*,*,},$(rank_times "$tmp/out/spearman.h5"),$(gain "$p" "$wall"),\"$MACHINE\",$(date -u +%F),$version" | tee -a "$SCSV"
  done
  rm -rf "$tmp/out"
}

for w in $WORK; do
  case $w in
    lattice)
      for s in $LSETS; do
        case $s in
          synth)
            read -r o a d <<< "$SYNTH"
            "$BIN" gen context --objects "$o" --attributes "$a" --density "$d" --seed 1 -o "$tmp/synth.dat" || failed=1
            [ -f "$tmp/synth.dat" ] && lattice_set "synth-${o}x${a}-${d}-ms${SYNTH_MS}" "$tmp/synth.dat" "$SYNTH_MS";;
          chess)
            if [ -f "$SHARED/data/fca/chess.dat" ]; then lattice_set "chess-ms$CHESS_MS" "$SHARED/data/fca/chess.dat" "$CHESS_MS"
            else echo "bench/scaling.sh: no $SHARED/data/fca/chess.dat: chess left out (--shared DIR)" >&2; fi;;
          *) echo "bench/scaling.sh: unknown lattice set $s (synth or chess)" >&2; failed=1;;
        esac
      done;;
    spearman)
      "$BIN" gen counts --rows "$ROWS" --cols 30 --groups 50 --seed 1 -o "$tmp/m.npy" || { failed=1; continue; }
      for m in $MODES; do spearman_mode "$m"; done
      rm -f "$tmp/m.npy";;
    *) echo "bench/scaling.sh: unknown workload $w (lattice or spearman)" >&2; failed=1;;
  esac
done
exit $failed
