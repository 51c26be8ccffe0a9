# bcp with missing entries against the data's truth and TensorLy's masked ALS (tests/bcp_missing.py).
source "$(dirname "$0")/lib.sh" "$@"
python3 -c "import numpy, h5py" 2> /dev/null || { echo "skipped: numpy and h5py are needed"; exit 77; }
if python3 "$(dirname "$0")/bcp_missing.py" "$BIN" "$WORK" > "$WORK/out" 2>&1; then ok; else bad "bcp_missing.py"; fi
cat "$WORK/out" | tail -15
finish
