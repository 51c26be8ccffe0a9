# jobs/fcbo.sbatch on a real SLURM: a private one-node cluster started
# here (tools/slurm-local.sh, 2 stand-in GPUs), the script submitted with
# sbatch as a user would, once through srun --mpi=pmix and once through
# mpirun; each job must succeed and its result must equal a direct run.
# srun without an MPI plugin must be refused.  Skips (77) only where it
# cannot be root or cannot get SLURM.
source "$(dirname "$0")/lib.sh" "$@"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then echo "skipped: starting SLURM daemons needs root"; exit 77; fi
if ! command -v slurmctld > /dev/null || ! command -v munged > /dev/null; then
  echo "installing slurm-wlm and munge"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge > "$WORK/apt.log" 2>&1 ||
    { echo "skipped: cannot install slurm-wlm and munge: $(tail -3 "$WORK/apt.log")"; exit 77; }
fi
W=$WORK
S=$W/slurm
trap '"$ROOT/tools/slurm-local.sh" stop "$S"; rm -rf "$OMPI_MCA_orte_tmpdir_base"' EXIT
eval "$(FAKE_GPUS=2 "$ROOT/tools/slurm-local.sh" start "$S")" || { echo "FAIL: SLURM did not start"; exit 1; }

"$BIN" gen context --objects 400 --attributes 20 --density 0.3 --seed 11 -o "$W/ctx.cxt"
"$BIN" lattice "$W/ctx.cxt" --text -q -t 1 > "$W/want"
# Waits for a job to leave the queue (no accounting here: sacct is not set up).
wait_job() {
  for _ in $(seq 600); do
    [ -z "$(squeue -h -j "$1" 2> /dev/null)" ] && return 0
    sleep 0.2
  done
  scancel "$1"; return 1
}
for launch in srun mpirun; do
  out=$W/out-$launch
  id=$(sbatch --parsable --export=ALL,INPUT="$W/ctx.cxt",OUTDIR="$out",FCBO_DIST="$BIN",LAUNCH=$launch \
         --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=00:05:00 --output="$W/job-$launch.log" \
         "$ROOT/jobs/fcbo.sbatch")
  check '[ -n "$id" ]' "$launch: sbatch refused the job"
  check 'wait_job "$id"' "$launch: job $id did not finish within 2 minutes"
  check 'grep -q "finished with exit status 0" "$W/job-$launch.log"' "$launch: job failed: $(cat "$W/job-$launch.log")"
  check 'grep -q "2 ranks x 1 thread" "$W/job-$launch.log"' "$launch: not 2 ranks: $(cat "$W/job-$launch.log")"
  "$BIN" info --text "$out/lattice.h5" > "$W/got" 2> "$W/err"
  check 'same_set "$W/got" "$W/want"' "$launch: the job's concepts differ from a direct run: $(cat "$W/err")"
  check '[ -n "$(ls "$out"/lattice.*.part-00001.h5 2> /dev/null)" ]' "$launch: no part of rank 1"
done
# COMMAND=dpc: the same clusters as a direct run.
"$BIN" gen blobs --n 400 --dims 2 --clusters 3 --seed 2 -o "$W/pts.txt"
"$BIN" dpc "$W/pts.txt" --labels "$W/pts.labels.txt" --centers 3 -o "$W/dpc-direct" -q
id=$(sbatch --parsable --export=ALL,COMMAND=dpc,INPUT="$W/pts.txt",OUTDIR="$W/out-dpc",FCBO_DIST="$BIN",FCBO_ARGS="--labels $W/pts.labels.txt --centers 3" \
       --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=00:05:00 --output="$W/job-dpc.log" "$ROOT/jobs/fcbo.sbatch")
wait_job "$id"
"$BIN" info --text "$W/out-dpc/dpc.h5" > "$W/dpc-got" 2> /dev/null
"$BIN" info --text "$W/dpc-direct/dpc.h5" > "$W/dpc-want" 2> /dev/null
check 'grep -q "2 ranks x 1 thread" "$W/job-dpc.log" && cmp -s "$W/dpc-got" "$W/dpc-want"' "dpc job: $(cat "$W/job-dpc.log")"
# COMMAND=bcp: 2 ranks on a grid, the rank the tensor was made with.
"$BIN" gen tensor --shape 12x10x8 --rank 3 --seed 4 -o "$W/t.h5"
id=$(sbatch --parsable --export=ALL,COMMAND=bcp,INPUT="$W/t.h5:/tensor",OUTDIR="$W/out-bcp",FCBO_DIST="$BIN",FCBO_ARGS="--rank 8" \
       --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=00:05:00 --output="$W/job-bcp.log" "$ROOT/jobs/fcbo.sbatch")
wait_job "$id"
check 'grep -q "2 ranks (grid" "$W/job-bcp.log" && "$BIN" info "$W/out-bcp/bcp.h5" | grep -q "rank:        3 (from 8"' \
  "bcp job: $(cat "$W/job-bcp.log")"
# A failing job reports failure: an input that does not exist.
id=$(sbatch --parsable --export=ALL,INPUT="$W/missing.cxt",OUTDIR="$W/out-bad",FCBO_DIST="$BIN" \
       --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=00:05:00 --output="$W/job-bad.log" "$ROOT/jobs/fcbo.sbatch")
wait_job "$id"
check 'grep -q "finished with exit status 2" "$W/job-bad.log" && [ ! -e "$W/out-bad" ]' "failing job: $(cat "$W/job-bad.log")"
# jobs/scaling.sbatch (bench/scaling.sh under srun): one CSV row per
# problem and rank count, each with every concept, and the pairs that one
# rank selects on its own.
id=$(cd "$ROOT" && sbatch --parsable --export=ALL,NP="1 2",LATTICE=synth,SYNTH="300 16 0.3",SYNTH_SUPPORT=0,ROWS=1500,MODES=count-only,BACKEND=cpu,CSV_DIR="$W/scaling",FCBO_DIST="$BIN" \
       --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=00:05:00 --output="$W/job-scaling.log" jobs/scaling.sbatch)
wait_job "$id"
n=$("$BIN" gen context --objects 300 --attributes 16 --density 0.3 --seed 1 -o "$W/s.dat" && "$BIN" lattice "$W/s.dat" --text -q | wc -l)
check '[ "$(awk -F, -v n="$n" "NR > 1 && \$2 == n {k++} END {print k}" "$W/scaling/scaling-lattice.csv" 2> /dev/null)" = 2 ]' \
      "scaling.sbatch lattice: $(cat "$W/job-scaling.log" "$W/scaling/scaling-lattice.csv" 2> /dev/null)"
"$BIN" gen counts --rows 1500 --cols 30 --groups 50 --seed 1 -o "$W/m.npy" &&
  "$BIN" spearman "$W/m.npy" --count-only -q -o "$W/sp1" 2> "$W/sp.err"
k=$(python3 -c "import h5py,sys; print(h5py.File(sys.argv[1],'r').attrs['n_pairs'])" "$W/sp1/spearman.h5")
check '[ "$(awk -F, -v k="$k" "NR > 1 && \$12 == k {n++} END {print n}" "$W/scaling/scaling-spearman.csv" 2> /dev/null)" = 2 ]' \
      "scaling.sbatch spearman: $(cat "$W/job-scaling.log" "$W/scaling/scaling-spearman.csv" 2> /dev/null)"
# srun without --mpi: refused instead of two copies doing the whole job.
srun -n 2 "$BIN" lattice "$W/ctx.cxt" -q -o "$W/out-nompi" 2> "$W/err"; rc=$?
check '[ $rc -ne 0 ] && grep -q "without an MPI interface" "$W/err" && [ ! -e "$W/out-nompi" ]' "srun without --mpi: exit $rc"
finish
