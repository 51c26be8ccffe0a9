# Under mpirun: the same concepts as a plain run, one result file, and a
# failure on any rank makes the job exit non-zero.
source "$(dirname "$0")/lib.sh" "$@"
command -v mpirun > /dev/null || { echo "skipped: no mpirun"; exit 77; }
W=$WORK
"$BIN" gen context --objects 300 --attributes 16 --density 0.35 --seed 5 -o "$W/c.dat"
"$BIN" lattice "$W/c.dat" --text -q -t 1 > "$W/want"
mpirun -np 2 --oversubscribe "$BIN" lattice "$W/c.dat" -o "$W/out" -q -t 1; rc=$?
check '[ $rc -eq 0 ]' "mpirun -np 2: exit $rc"
"$BIN" info --text "$W/out/lattice.h5" > "$W/got"
check 'same_set "$W/got" "$W/want"' "mpirun -np 2: concepts differ from the plain run"
mpirun -np 2 --oversubscribe "$BIN" lattice "$W/missing.dat" -o "$W/out2" -q 2> "$W/err"; rc=$?
check '[ $rc -ne 0 ] && grep -q "missing.dat: cannot open" "$W/err" && [ ! -e "$W/out2" ]' "mpirun with a missing input: exit $rc"
finish
