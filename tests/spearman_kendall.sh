# spearman --method kendall against scipy.stats.kendalltau (tests/spearman_kendall.py).
source "$(dirname "$0")/lib.sh" "$@"
python3 -c "import numpy, h5py, scipy" 2> /dev/null || { echo "skipped: numpy, h5py and scipy are needed"; exit 77; }
if python3 "$(dirname "$0")/spearman_kendall.py" "$BIN" "$WORK" > "$WORK/out" 2>&1; then ok; else bad "spearman_kendall.py"; fi
cat "$WORK/out" | tail -15
finish
