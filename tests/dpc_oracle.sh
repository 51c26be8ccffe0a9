# fcbo-dist dpc against a brute-force NumPy reference (tests/dpc_numpy.py),
# the shared clustering benchmarks by ARI, 1 to 4 ranks, and bad input.
# numpy and h5py are installed for the test when missing.
source "$(dirname "$0")/lib.sh" "$@"
if ! python3 -c "import numpy, h5py" 2> /dev/null; then
  python3 -m pip install -q numpy h5py > "$WORK/pip.log" 2>&1 ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-numpy python3-h5py > "$WORK/apt.log" 2>&1
fi
python3 -c "import numpy, h5py" 2> /dev/null || { echo "skipped: cannot install numpy and h5py"; exit 77; }
python3 "$(dirname "$0")/dpc_numpy.py" "$BIN" "$WORK" "$SHARED"
