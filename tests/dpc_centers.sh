# dpc's automatic centres, both rules, against numpy (tests/dpc_centers.py).
source "$(dirname "$0")/lib.sh" "$@"
python3 -c "import numpy, h5py, scipy" 2> /dev/null || { echo "skipped: numpy, h5py and scipy are needed"; exit 77; }
if python3 "$(dirname "$0")/dpc_centers.py" "$BIN" "$WORK" > "$WORK/out" 2>&1; then ok; else bad "dpc_centers.py"; fi
cat "$WORK/out" | tail -15
finish
