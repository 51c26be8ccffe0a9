# mushroom under mpirun -np 3: the 238,710 concepts of the reference
# listing, read back through the master file.
source "$(dirname "$0")/lib.sh" "$@"
command -v mpirun > /dev/null || { echo "skipped: no mpirun"; exit 77; }
need_shared mushroom.dat
need_shared mushroom.intents.txt.gz
D=$SHARED/data/fca
mpirun --oversubscribe -np 3 "$BIN" lattice "$D/mushroom.dat" -o "$WORK/out" -q -t 1; rc=$?
check '[ $rc -eq 0 ]' "mpirun -np 3: exit $rc"
"$BIN" info --text "$WORK/out/lattice.h5" > "$WORK/got"
check '[ $(wc -l < "$WORK/got") -eq 238710 ]' "mushroom np=3: $(wc -l < "$WORK/got") concepts, expected 238710"
check 'cmp -s <(sort "$WORK/got") <(zcat "$D/mushroom.intents.txt.gz" | sort)' "mushroom np=3: intents differ from the reference listing"
finish
