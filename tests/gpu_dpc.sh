# The CUDA dpc backend against the CPU backend (tests/gpu_dpc.py): the
# same rho, delta, parent, centres and labels for the cutoff kernel, bit
# for bit; for the Gaussian kernel rho within 1e-12 and the same labels;
# on one GPU and, where there are two, on two ranks; the device released
# early.  Needs a GPU:
# FD_TEST_GPU_BACKEND=cpu dry-runs it without one.
source "$(dirname "$0")/lib.sh" "$@"
printf '1 2\n3 4\n5 6\n' > "$WORK/probe.txt"
gpu_probe "$BIN" dpc "$WORK/probe.txt" --dc 3
python3 -c "import numpy, h5py" 2> /dev/null || { echo "skipped: numpy and h5py are needed"; exit 77; }
check 'python3 "$(dirname "$0")/gpu_dpc.py" "$BIN" "$WORK" "$GB" "${GPUS:-0}"' "gpu_dpc.py failed"
# The context ends on a thread once the run is done with the GPU, while
# the result is written (FD_GPU_RELEASE=early, the default), and the
# result is whole; FD_GPU_RELEASE=exit leaves it to the process's end.
if [ "$GB" = cuda ]; then
  "$BIN" gen blobs --n 20000 --dims 2 --clusters 4 --seed 2 -o "$WORK/rel.txt" > /dev/null
  released() { env "$@" FD_GPU_VERBOSE=1 "$BIN" dpc "$WORK/rel.txt" --backend cuda -o "$WORK/rel" --force -q 2>&1 |
                 grep -c "the device released"; }
  check '[ "$(released)" = 1 ] && [ "$(released FD_GPU_RELEASE=exit)" = 0 ] && "$BIN" info "$WORK/rel/dpc.h5" > /dev/null' \
        "the GPU's early release: $(released) with the default, $(released FD_GPU_RELEASE=exit) with exit"
fi
finish
