# The CUDA dpc backend against the CPU backend (tests/gpu_dpc.py): the
# same rho, delta, parent, centres and labels for the cutoff kernel, bit
# for bit; for the Gaussian kernel rho within 1e-12 and the same labels;
# on one GPU and, where there are two, on two ranks.  Needs a GPU:
# FD_TEST_GPU_BACKEND=cpu dry-runs it without one.
source "$(dirname "$0")/lib.sh" "$@"
GB=${FD_TEST_GPU_BACKEND:-cuda}
printf '1 2\n3 4\n5 6\n' > "$WORK/probe.txt"
if ! "$BIN" dpc "$WORK/probe.txt" --dc 3 --backend "$GB" -q > /dev/null 2> "$WORK/probe.err"; then
  if grep -q "cannot run here\|not available" "$WORK/probe.err"; then echo "skipped: $(cat "$WORK/probe.err")"; exit 77; fi
  bad "probe: $(cat "$WORK/probe.err")"
fi
python3 -c "import numpy, h5py" 2> /dev/null || { echo "skipped: numpy and h5py are needed"; exit 77; }
GPUS=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
check 'python3 "$(dirname "$0")/gpu_dpc.py" "$BIN" "$WORK" "$GB" "${GPUS:-0}"' "gpu_dpc.py failed"
finish
