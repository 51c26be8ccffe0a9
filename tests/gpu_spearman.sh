# The CUDA spearman backend against the CPU backend (tests/gpu_spearman.py):
# the same pairs, bit-identical rho and p, the same counts and histogram,
# in every selection mode, on one GPU and, where there are two, on two
# ranks.  Needs a GPU: CI only builds the backend (ctest -L gpu on the GPU
# machine runs this).  FD_TEST_GPU_BACKEND=cpu dry-runs it without a GPU.
source "$(dirname "$0")/lib.sh" "$@"
GB=${FD_TEST_GPU_BACKEND:-cuda}
printf '1 2 3 4\n4 3 2 1\n1 3 2 4\n' > "$WORK/probe.txt"
if ! "$BIN" spearman "$WORK/probe.txt" --backend "$GB" --count-only -q > /dev/null 2> "$WORK/probe.err"; then
  if grep -q "cannot run here\|not available" "$WORK/probe.err"; then echo "skipped: $(cat "$WORK/probe.err")"; exit 77; fi
  bad "probe: $(cat "$WORK/probe.err")"
fi
python3 -c "import numpy, h5py" 2> /dev/null || { echo "skipped: numpy and h5py are needed"; exit 77; }
GPUS=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
check 'python3 "$(dirname "$0")/gpu_spearman.py" "$BIN" "$WORK" "$GB" "${GPUS:-0}"' "gpu_spearman.py failed"
finish
