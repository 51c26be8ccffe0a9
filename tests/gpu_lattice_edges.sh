# lattice --edges on the CUDA backend against brute force and the CPU
# backend (tests/gpu_lattice_edges.py).  Needs a GPU: CI only builds the
# backend (ctest -L gpu on the GPU machine runs this).
# FD_TEST_GPU_BACKEND=cpu dry-runs it without a GPU.
source "$(dirname "$0")/lib.sh" "$@"
"$BIN" gen context --objects 20 --attributes 8 --density 0.3 -o "$WORK/probe.cxt"
gpu_probe "$BIN" lattice "$WORK/probe.cxt"
python3 -c "import numpy, h5py" 2> /dev/null || { echo "skipped: numpy and h5py are needed"; exit 77; }
M=$SHARED/data/fca/mushroom.dat; [ -e "$M" ] || { echo "note: $M is absent, skipped"; M=none; }
if python3 "$(dirname "$0")/gpu_lattice_edges.py" "$BIN" "$WORK" "$GB" "${GPUS:-0}" "$M" > "$WORK/out" 2>&1; then ok
else bad "gpu_lattice_edges.py: $(tail -20 "$WORK/out")"; fi
tail -5 "$WORK/out"
finish
