# The Python package (python/): installed with pip into a scratch
# directory, as a user would (`pip install ./python`), then its tests
# (python/tests/test_read.py) against `fcbo-dist info --text` and the
# oracles, single- and several-rank results, and damaged files.
source "$(dirname "$0")/lib.sh" "$@"
src=$(cd "$(dirname "$0")/../python" && pwd)
if ! python3 -c "import numpy, h5py, scipy" 2> /dev/null; then
  python3 -m pip install -q numpy h5py scipy > "$WORK/pip.log" 2>&1 ||
    python3 -m pip install -q --break-system-packages numpy h5py scipy >> "$WORK/pip.log" 2>&1 || true
fi
python3 -c "import numpy, h5py, scipy" 2> /dev/null || { echo "skipped: cannot install numpy, h5py and scipy"; exit 77; }
# A copy of the source: pip's build leaves build/ and *.egg-info beside it.
cp -r "$src" "$WORK/src"
if ! python3 -m pip install -q --no-deps --target "$WORK/site" "$WORK/src" > "$WORK/install.log" 2>&1; then
  # No index to fetch setuptools from: build with the one installed.
  python3 -m pip install -q --no-deps --no-build-isolation --target "$WORK/site" "$WORK/src" >> "$WORK/install.log" 2>&1 ||
    { cat "$WORK/install.log"; bad "pip install ./python"; finish; exit; }
fi
check '[ -f "$WORK/site/fcbo_dist/read.py" ]' "pip installed the package"
# From elsewhere than the source tree, so that the installed copy is the one imported.
cd "$WORK"
check 'PYTHONPATH="$WORK/site" python3 -c "import fcbo_dist, sys; sys.exit(not fcbo_dist.__file__.startswith(\"$WORK/site\"))"' "import the installed fcbo_dist"
if PYTHONPATH="$WORK/site" FCBO_DIST="$BIN" FD_PY_WORK="$WORK/py" python3 -m unittest discover -s "$src/tests" -t "$src/tests" > "$WORK/unittest.log" 2>&1; then ok
else cat "$WORK/unittest.log"; bad "python/tests"; fi
tail -3 "$WORK/unittest.log"
finish
