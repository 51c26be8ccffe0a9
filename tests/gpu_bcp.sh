# The CUDA bcp backend against the CPU backend (tests/gpu_bcp.py): the same
# rank and, after 200 sweeps (--tol 0), the same factors to 1e-10 once
# components are matched and signs aligned, on one GPU and, where there
# are two, on two ranks.  Needs a GPU: FD_TEST_GPU_BACKEND=cpu dry-runs it.
source "$(dirname "$0")/lib.sh" "$@"
python3 -c "import numpy, h5py, scipy" 2> /dev/null || { echo "skipped: numpy, h5py and scipy are needed"; exit 77; }
python3 -c "import numpy; numpy.save('$WORK/probe.npy', numpy.ones((2, 3, 4)))"
gpu_probe "$BIN" bcp "$WORK/probe.npy" --rank 1 --max-iter 1
check 'python3 "$(dirname "$0")/gpu_bcp.py" "$BIN" "$WORK" "$GB" "${GPUS:-0}" "$SHARED"' "gpu_bcp.py failed"
finish
