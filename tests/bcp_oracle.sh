# fcbo-dist bcp against the true factors of synthetic tensors (FMS), the
# rank they were made with, TensorLy's parafac at that rank (fit), the
# shared amino-acid tensor, the lower bound's monotonicity, and bad input
# (tests/bcp_check.py).  numpy, h5py, scipy and tensorly are installed for
# the test when missing.
source "$(dirname "$0")/lib.sh" "$@"
if ! python3 -c "import numpy, h5py, scipy, tensorly" 2> /dev/null; then
  python3 -m pip install -q numpy h5py scipy tensorly > "$WORK/pip.log" 2>&1 ||
    python3 -m pip install -q --break-system-packages numpy h5py scipy tensorly >> "$WORK/pip.log" 2>&1 || true
fi
python3 -c "import numpy, h5py, scipy" 2> /dev/null || { echo "skipped: cannot install numpy, h5py and scipy"; exit 77; }
python3 "$(dirname "$0")/bcp_check.py" "$BIN" "$WORK" "$SHARED"
