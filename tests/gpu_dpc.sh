# The CUDA dpc backend against the CPU backend (tests/gpu_dpc.py): the
# same rho, delta, parent, centres and labels for the cutoff kernel, bit
# for bit; for the Gaussian kernel rho within 1e-12 and the same labels;
# on one GPU and, where there are two, on two ranks.  Needs a GPU:
# FD_TEST_GPU_BACKEND=cpu dry-runs it without one.
source "$(dirname "$0")/lib.sh" "$@"
printf '1 2\n3 4\n5 6\n' > "$WORK/probe.txt"
gpu_probe "$BIN" dpc "$WORK/probe.txt" --dc 3
python3 -c "import numpy, h5py" 2> /dev/null || { echo "skipped: numpy and h5py are needed"; exit 77; }
check 'python3 "$(dirname "$0")/gpu_dpc.py" "$BIN" "$WORK" "$GB" "${GPUS:-0}"' "gpu_dpc.py failed"
finish
