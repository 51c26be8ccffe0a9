# T10I4D100K: 2,347,376 concepts (the FIMI benchmark; sparse and wide).
source "$(dirname "$0")/lib.sh" "$@"
need_shared T10I4D100K.dat
n=$("$BIN" lattice "$SHARED/data/fca/T10I4D100K.dat" --text -q -t 2 | wc -l)
check '[ "$n" -eq 2347376 ]' "T10I4D100K: $n concepts, expected 2347376"
finish
