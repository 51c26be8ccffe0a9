# fcbo-dist spearman against scipy (tests/spearman_scipy.py).  scipy, numpy
# and h5py are installed for the test when missing (pip, then Debian).
source "$(dirname "$0")/lib.sh" "$@"
if ! python3 -c "import scipy, numpy, h5py" 2> /dev/null; then
  python3 -m pip install -q scipy numpy h5py > "$WORK/pip.log" 2>&1 ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-scipy python3-numpy python3-h5py > "$WORK/apt.log" 2>&1
fi
python3 -c "import scipy, numpy, h5py" 2> /dev/null || { echo "skipped: cannot install scipy, numpy and h5py"; exit 77; }
python3 "$(dirname "$0")/spearman_scipy.py" "$BIN" "$WORK"
