# The CUDA spearman backend against the CPU backend (tests/gpu_spearman.py):
# the same pairs, bit-identical rho and p, the same counts and histogram,
# in every selection mode, on one GPU and, where there are two, on two
# ranks.  Needs a GPU: CI only builds the backend (ctest -L gpu on the GPU
# machine runs this).  FD_TEST_GPU_BACKEND=cpu dry-runs it without a GPU.
source "$(dirname "$0")/lib.sh" "$@"
printf '1 2 3 4\n4 3 2 1\n1 3 2 4\n' > "$WORK/probe.txt"
gpu_probe "$BIN" spearman "$WORK/probe.txt" --count-only
python3 -c "import numpy, h5py" 2> /dev/null || { echo "skipped: numpy and h5py are needed"; exit 77; }
check 'python3 "$(dirname "$0")/gpu_spearman.py" "$BIN" "$WORK" "$GB" "${GPUS:-0}"' "gpu_spearman.py failed"
finish
