# rules (stem base, Luxenburger basis) against brute force (tests/lattice_rules.py).
source "$(dirname "$0")/lib.sh" "$@"
python3 -c "import numpy, h5py" 2> /dev/null || { echo "skipped: numpy and h5py are needed"; exit 77; }
if python3 "$(dirname "$0")/lattice_rules.py" "$BIN" "$WORK" > "$WORK/out" 2>&1; then ok; else bad "lattice_rules.py"; fi
cat "$WORK/out" | tail -15
finish
