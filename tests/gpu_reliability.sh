# Failures and resumption on GPUs (needs a GPU; CI only builds this):
# more ranks than GPUs is refused by every workload; a GPU too small for the problem
# (FD_GPU_MEM_LIMIT stands in for one) stops every workload with exit 2,
# the knob to change, and nothing left; a bad FD_GPU_MEM_LIMIT, and bad
# values of dpc's GPU knobs, are refused by name; a lattice and a spearman run on the GPU whose last rank is
# killed with SIGKILL finish with --resume on the GPU and equal the CPU
# backend's result, without redoing what the checkpoint holds.
source "$(dirname "$0")/lib.sh" "$@"
# These runs check the GPU's own paths: on their small inputs the host's
# threads, which begin while the GPU starts (FD_GPU_HOST_START), would
# finish the search first.  The cases of the host start set it on.
export FD_GPU_HOST_START=off
W=$WORK
"$BIN" gen context --objects 2000 --attributes 40 --density 0.2 --seed 3 -o "$W/c.dat"
gpu_probe "$BIN" lattice "$W/c.dat"
python3 -c "import numpy, h5py" 2> /dev/null || { echo "skipped: numpy and h5py are needed"; exit 77; }
GPUS=${GPUS:-1}
[ "$GPUS" -ge 1 ] || GPUS=1
attr() { python3 -c "import sys, h5py; v = h5py.File(sys.argv[1]).attrs[sys.argv[2]]; print(v.decode() if isinstance(v, bytes) else v)" "$1" "$2"; }
units() { python3 -c "import sys, h5py; f = h5py.File(sys.argv[1]); print(int(f['ranks/' + sys.argv[2]][:].sum()) if 'ranks' in f else -1)" "$1" "$2"; }

"$BIN" gen counts --rows 20000 --cols 20 --seed 2 -o "$W/m.npy"
"$BIN" gen blobs --n 20000 --dims 2 --clusters 4 --seed 2 -o "$W/p.txt"
"$BIN" gen tensor --shape 30x30x30 --rank 3 --seed 2 -o "$W/t.npy"

# More ranks than GPUs, in every workload (each places its ranks, and
# makes the device's context while it reads: src/mpi/device_warm.h).
for cmd in "lattice $W/c.dat" "spearman $W/m.npy --count-only" "dpc $W/p.txt" "bcp $W/t.npy --rank 5"; do
  # shellcheck disable=SC2086
  mpirun -np $((GPUS + 1)) "$BIN" $cmd --backend "$GB" -o "$W/many" -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "ranks but has $GPUS GPU" "$W/err" && [ ! -e "$W/many" ]' \
        "${cmd%% *}: $((GPUS + 1)) ranks on $GPUS GPUs: exit $rc: $(head -3 "$W/err")"
done

# A GPU too small: every workload names what to change.
for spec in "lattice $W/c.dat|FD_GPU_CHUNK" "spearman $W/m.npy --pvalue 0.05|FD_GPU_STRIP" "dpc $W/p.txt|--backend cpu" \
            "bcp $W/t.npy --rank 5|--fuse"; do
  cmd=${spec%|*} want=${spec#*|}
  # shellcheck disable=SC2086
  FD_GPU_MEM_LIMIT=4096 "$BIN" $cmd --backend "$GB" -o "$W/small" -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "out of GPU memory for" "$W/err" && grep -q -- "$want" "$W/err" && [ ! -e "$W/small" ]' \
        "${cmd%% *} on a GPU too small: exit $rc: $(cat "$W/err")"
done

# A bad FD_GPU_MEM_LIMIT is refused by name (it is read where the GPU
# allocates, so only a GPU run meets it), and nothing is left.
for cmd in "lattice $W/c.dat" "spearman $W/m.npy --pvalue 0.05"; do
  for bad in lots 0; do
    # shellcheck disable=SC2086
    FD_GPU_MEM_LIMIT=$bad "$BIN" $cmd --backend "$GB" -o "$W/bad" -q 2> "$W/err"; rc=$?
    check '[ $rc -eq 2 ] && grep -q "FD_GPU_MEM_LIMIT" "$W/err" && [ ! -e "$W/bad" ]' \
          "${cmd%% *} with FD_GPU_MEM_LIMIT=$bad: exit $rc: $(cat "$W/err")"
  done
done

# dpc's GPU knobs, read where the device works (d_c by --neighbors, the
# brute-force splits): a bad value is refused by name, nothing left.
for kv in FD_DPC_GPU_COLLECT=lots FD_DPC_GPU_COLLECT=-1 FD_DPC_GPU_BLOCKS=0 FD_DPC_GPU_BLOCKS=65; do
  env "$kv" "$BIN" dpc "$W/p.txt" --neighbors 5 --backend "$GB" -o "$W/bad" -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "${kv%%=*}" "$W/err" && [ ! -e "$W/bad" ]' "dpc with $kv: exit $rc: $(cat "$W/err")"
done

# Kill the last rank, resume on the GPU; compare with the CPU backend.
# One subtree a refill: the job's only rank takes 64 by default, which is
# the whole of this small list in one segment, and the kill after the
# second segment never came (H100, 2026-12-07).
last=$((GPUS - 1))
"$BIN" lattice "$W/c.dat" --backend cpu -o "$W/lref" -q
FD_GPU_REFILL=1 FD_TEST_KILL_AFTER=$last:2:1 mpirun -np "$GPUS" "$BIN" lattice "$W/c.dat" --backend "$GB" -o "$W/lat" -q \
  --checkpoint-seconds 1e-9 > /dev/null 2>&1; rc=$?
check '[ $rc -ne 0 ] && [ ! -e "$W/lat/lattice.h5" ] && [ -e "$W/lat/lattice.checkpoint/job.h5" ]' "lattice on GPU killed: exit $rc"
wait_lock_free "$W/lat"
mpirun -np "$GPUS" "$BIN" lattice "$W/c.dat" --backend "$GB" --resume "$W/lat" -q --checkpoint-seconds 1e-9 2> "$W/err"
rc=$?
check '[ $rc -eq 0 ] && same_set <("$BIN" info --text "$W/lat/lattice.h5") <("$BIN" info --text "$W/lref/lattice.h5")' \
      "lattice resumed on GPU: exit $rc: $(cat "$W/err")"
check '[ "$(attr "$W/lat/lattice.h5" resumed_subtrees)" -gt 0 ]' "lattice resumed on GPU redid everything"

"$BIN" spearman "$W/m.npy" --backend cpu --pvalue 1e-3 -o "$W/sref" -q
FD_TEST_KILL_AFTER=$last:2:1 mpirun -np "$GPUS" "$BIN" spearman "$W/m.npy" --backend "$GB" --pvalue 1e-3 -o "$W/sp" \
  -q --checkpoint-seconds 1e-9 > /dev/null 2>&1; rc=$?
check '[ $rc -ne 0 ] && [ ! -e "$W/sp/spearman.h5" ] && [ -e "$W/sp/spearman.checkpoint/job.h5" ]' "spearman on GPU killed: exit $rc"
wait_lock_free "$W/sp"
mpirun -np "$GPUS" "$BIN" spearman "$W/m.npy" --backend "$GB" --pvalue 1e-3 --resume "$W/sp" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 0 ] && cmp -s <("$BIN" info --text "$W/sp/spearman.h5" | sort) <("$BIN" info --text "$W/sref/spearman.h5" | sort)' \
      "spearman resumed on GPU: exit $rc: $(cat "$W/err")"
check '[ "$(attr "$W/sp/spearman.h5" resumed_records)" -gt 0 ]' "spearman resumed on GPU redid everything"
finish
