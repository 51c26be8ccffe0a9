# Known results on the shared FIMI data: mushroom's 238,710 concepts equal
# the reference listing as a set, with the reference FCbO's counters, and
# chess at minimum support 1350 has 1,015,772 concepts.
source "$(dirname "$0")/lib.sh" "$@"
need_shared mushroom.dat
D=$SHARED/data/fca
for t in 1 2; do
  "$BIN" lattice "$D/mushroom.dat" --text --stats -t $t > "$WORK/got" 2> "$WORK/err"
  check '[ $(wc -l < "$WORK/got") -eq 238710 ]' "mushroom, $t threads: $(wc -l < "$WORK/got") concepts, expected 238710"
  check 'cmp -s <(sort "$WORK/got") <(zcat "$D/mushroom.intents.txt.gz" | sort)' "mushroom, $t threads: intents differ from the reference listing"
  # The reference code counts the root's closure too: 299,202 = 299,201 + 1.
  check 'grep -q "closures 299201  canonicity failures 60492  pruned by failed sets 1022209" "$WORK/err"' \
        "mushroom, $t threads: counters differ from the reference FCbO: $(cat "$WORK/err")"
done
if [ -e "$D/chess.dat" ]; then
  n=$("$BIN" lattice "$D/chess.dat" --min-support 1350 --text -q | wc -l)
  check '[ "$n" -eq 1015772 ]' "chess --min-support 1350: $n concepts, expected 1015772"
fi
finish
