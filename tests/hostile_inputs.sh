# Inputs that are not what they seem (docs/running.md, "Inputs"): each is
# refused with the file named and exit status 2, or read as the documented
# rule says; nothing blocks, grows without bound or crashes.
source "$(dirname "$0")/lib.sh" "$@"
W=$WORK
refused() { # what, want-in-message, BIN subcommand args...
  local what=$1 want=$2 rc q=-q
  shift 2
  [ "$2" = info ] && q=
  timeout 60 "$@" $q > /dev/null 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q -- "$want" "$W/err"' "$what: exit $rc: $(cat "$W/err")"
}
# Not regular files: a FIFO (would block), a device (would never end), a
# directory; for every workload and for info.
mkfifo "$W/fifo.dat" "$W/fifo.txt" "$W/fifo.npy" "$W/fifo.h5"
for spec in "lattice|$W/fifo.dat" "spearman|$W/fifo.txt" "dpc|$W/fifo.npy" "bcp|$W/fifo.npy" "info|$W/fifo.h5" \
            "spearman|$W/fifo.h5:/x" "bcp|$W/fifo.h5:/x"; do
  refused "${spec%%|*} on a FIFO" "FIFO" "$BIN" ${spec%%|*} "${spec#*|}"
done
for spec in "lattice|/dev/zero" "spearman|/dev/zero" "dpc|/dev/zero" "info|/dev/zero" "lattice|$W" "spearman|$W" \
            "dpc|$W"; do
  refused "${spec%%|*} on ${spec#*|}" "not a regular file" "$BIN" ${spec%%|*} "${spec#*|}"
done
# info takes an output directory, and refuses one that holds no result.
refused "info on a directory without a result" "a directory with no result" "$BIN" info "$W"
# A FIFO is not hashed as an empty file either: no result, no directory.
check '[ ! -e "$W/out" ]' "a FIFO run made an output"

# Address-space limits for the cases below; the sanitizers reserve
# terabytes of shadow memory up front, so under them the limit is off.
limit_vm() { if [ -z "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]; then ulimit -v "$1"; fi; }
# A file without line ends is refused once a line passes 64 MiB, with
# memory bounded (a 70 MB "line"; 1.5 GB of address space is plenty).
head -c 70000000 /dev/zero | tr '\0' '7' > "$W/long.dat"
cp "$W/long.dat" "$W/long.txt"
(limit_vm 1500000; refused "a 70 MB line (FIMI)" "longer than 64 MiB" "$BIN" lattice "$W/long.dat")
(limit_vm 1500000; refused "a 70 MB line (text)" "longer than 64 MiB" "$BIN" spearman "$W/long.txt")
# One transaction of 500,000 items: FCbO's failed closures are kept within
# a budget (they took 31 GB), and the concepts are right: the line's items
# and the three of the other line.
python3 -c "print(' '.join(str(i) for i in range(1, 500001))); print('1 2 3')" > "$W/wide.dat"
(limit_vm 3000000; timeout 300 "$BIN" lattice "$W/wide.dat" --text -q -t 2 > "$W/wide.out" 2> "$W/err"); rc=$?
check '[ $rc -eq 0 ] && [ "$(wc -l < "$W/wide.out")" = 2 ] && grep -qx "1 2 3" "$W/wide.out"' \
      "a 500,000-item line: exit $rc: $(head -c 300 "$W/err")"
rm -f "$W/long.dat" "$W/long.txt" "$W/wide.dat" "$W/wide.out"

# A UTF-8 byte order mark is not part of the first value: every text reader.
printf '\xef\xbb\xbf3,1,2\n1,2,3\n2,3,1\n' > "$W/bom.csv"
"$BIN" spearman "$W/bom.csv" --check-input > "$W/out.txt" 2>&1; rc=$?
check '[ $rc -eq 0 ] && grep -q "3 rows x 3 observations" "$W/out.txt"' "BOM, spearman: exit $rc: $(cat "$W/out.txt")"
printf '\xef\xbb\xbf1 2\n2 3\n' > "$W/bom.dat"
printf '1 2\n2 3\n' > "$W/nobom.dat"
"$BIN" lattice "$W/bom.dat" --text -q > "$W/a"; "$BIN" lattice "$W/nobom.dat" --text -q > "$W/b"
check 'cmp -s "$W/a" "$W/b"' "BOM, FIMI: other concepts"
printf '\xef\xbb\xbfa,b,c\n1,0,1\n0,1,1\n' > "$W/bomc.csv"
"$BIN" lattice "$W/bomc.csv" --text -q > "$W/a"; rc=$?
check '[ $rc -eq 0 ] && [ "$(wc -l < "$W/a")" = 4 ]' "BOM, 0/1 CSV with a header: exit $rc"
printf '\xef\xbb\xbf1 2\n3 4\n9 9\n' > "$W/bomp.txt"
"$BIN" dpc "$W/bomp.txt" --dc 1 -q > /dev/null 2> "$W/err"; rc=$?
check '[ $rc -eq 0 ]' "BOM, dpc: exit $rc: $(cat "$W/err")"

# The header rule: a first line is a header only when none of its fields
# is a number or empty; NA, an empty cell or a typo is an error at line 1.
printf 'x,y,z\n1,2,3\n3,1,2\n' > "$W/h.csv"
"$BIN" spearman "$W/h.csv" --check-input > "$W/out.txt" 2>&1
check 'grep -q "2 rows x 3" "$W/out.txt"' "a header of names: $(cat "$W/out.txt")"
printf '1,NA,3\n1,2,3\n3,1,2\n' > "$W/na.csv"
refused "NA on the first line" "na.csv:1: column 2: 'NA' is not a number" "$BIN" spearman "$W/na.csv"
printf '1,,3\n1,2,3\n3,1,2\n' > "$W/empty.csv"
refused "an empty first cell" "empty.csv:1: column 2 is empty" "$BIN" spearman "$W/empty.csv"
printf '1,2,3x\n1,2,3\n3,1,2\n' > "$W/typo.csv"
refused "a typo on the first line" "typo.csv:1: column 3" "$BIN" dpc "$W/typo.csv"
printf '1990,1991,1992\n1,2,3\n3,1,2\n' > "$W/years.csv"
"$BIN" spearman "$W/years.csv" --header yes --check-input > "$W/out.txt" 2>&1
check 'grep -q "2 rows x 3" "$W/out.txt"' "--header yes: $(cat "$W/out.txt")"
"$BIN" spearman "$W/h.csv" --header no -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "h.csv:1" "$W/err"' "--header no on names: exit $rc"
refused "--header maybe" "expected auto, yes or no" "$BIN" spearman "$W/h.csv" --header maybe
printf '1,0,x,1\n0,1,1,1\n' > "$W/typo01.csv"
refused "a 0/1 CSV with a typo on its first row" "cell 3 is 'x'" "$BIN" lattice "$W/typo01.csv"
# A wrong delimiter: no N x 0 matrix or context, an error that says so.
printf '1;0;1\n0;1;1\n1;1;0\n' > "$W/semi01.csv"
refused "a 0/1 context with semicolons" "no attribute columns" "$BIN" lattice "$W/semi01.csv"
printf '1;2;3\n4;5;6\n7;8;1\n' > "$W/semi.csv"
refused "a matrix with semicolons" "separated by commas" "$BIN" spearman "$W/semi.csv"
if python3 -c "import h5py, numpy" 2> /dev/null; then
  python3 -c "
import h5py, numpy as np, sys
with h5py.File(sys.argv[1], 'w') as f:
    f['x'] = np.zeros((5, 0))
" "$W/zero.h5"
  refused "an HDF5 matrix of zero columns (dpc)" "no columns" "$BIN" dpc "$W/zero.h5:/x"
  refused "an HDF5 matrix of zero columns (spearman)" "no columns" "$BIN" spearman "$W/zero.h5:/x"
fi

# dpc: coordinates whose squared distances would overflow are refused
# (they hung the grid and broke the heap without it) ...
python3 -c "
import random
random.seed(1)
for i in range(100):
    print(repr(random.uniform(-1e160, 1e160)), repr(random.uniform(-1, 1)))" > "$W/huge.txt"
refused "dpc at 1e160" "would overflow" "$BIN" dpc "$W/huge.txt"
FD_DPC_GRID=off refused "dpc at 1e160 without the grid" "would overflow" "$BIN" dpc "$W/huge.txt"
# ... and the cutoff kernel counts d < d_c exactly: (0,0) and (1,1) are
# sqrt(2) apart, which is d_c here and is not below it (the squared
# distance 2 is below fl(d_c * d_c), which the old rule counted).
printf '0 0\n1 1\n5 5\n0 3\n4 3\n' > "$W/edge.txt"
"$BIN" dpc "$W/edge.txt" --dc 1.4142135623730951 -o "$W/edge1" -q
check '[ "$("$BIN" info --text "$W/edge1/dpc.h5" | awk "NR>1 {s += \$3} END {print s}")" = 0 ]' \
      "d == d_c counted: $("$BIN" info --text "$W/edge1/dpc.h5" | head -3)"
# (0,3) is 3 from (0,0), 2.24 from (1,1) and exactly 4 from (4,3): at
# d_c = 4 it has 2 neighbours, at the next double above 4 three.
"$BIN" dpc "$W/edge.txt" --dc 4 -o "$W/edge2" -q
"$BIN" dpc "$W/edge.txt" --dc 4.000000000000001 -o "$W/edge3" -q
r2=$("$BIN" info --text "$W/edge2/dpc.h5" | awk 'NR>1 && $1 == 3 {print $3}')
r3=$("$BIN" info --text "$W/edge3/dpc.h5" | awk 'NR>1 && $1 == 3 {print $3}')
check '[ "$r2" = 2 ] && [ "$r3" = 3 ]' "rho of (0,3) at d_c = 4 and just above: $r2 and $r3, expected 2 and 3"
# Result files whose optional groups disagree with their counts: dpc's
# /predict (a parent that is no fitted point) and bcp's /starts (a best
# start past the starts) are refused by info, naming the dataset.
if python3 -c "import h5py" 2> /dev/null; then
  "$BIN" gen blobs --n 300 --dims 2 --clusters 3 --seed 1 -o "$W/pfit.txt" > /dev/null
  "$BIN" gen blobs --n 40 --dims 2 --clusters 3 --seed 2 -o "$W/pnew.txt" > /dev/null
  "$BIN" dpc "$W/pfit.txt" --centers 3 --predict "$W/pnew.txt" -o "$W/pd" --force -q
  python3 -c "import h5py, sys; f = h5py.File(sys.argv[1], 'r+'); f['predict/parent'][3] = 10**6" "$W/pd/dpc.h5"
  refused "dpc.h5 with a /predict/parent past the points" "/predict/parent\[3\]" "$BIN" info "$W/pd/dpc.h5"
  "$BIN" gen tensor --shape 8x7x6 --rank 2 --seed 1 -o "$W/st.h5" > /dev/null
  "$BIN" bcp "$W/st.h5:/tensor" --starts 3 -o "$W/bs" --force -q
  python3 -c "import h5py, sys; f = h5py.File(sys.argv[1], 'r+'); f.attrs['best_start'] = 7" "$W/bs/bcp.h5"
  refused "bcp.h5 with best_start past its starts" "best_start 7 of 3" "$BIN" info "$W/bs/bcp.h5"
fi
finish
