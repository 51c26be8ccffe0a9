# The result file: complete, readable by h5dump and by `info`, equal to the
# --text stream; existing directories refused without --force; no
# temporary files left.
source "$(dirname "$0")/lib.sh" "$@"
W=$WORK
"$BIN" gen context --objects 200 --attributes 14 --density 0.4 --seed 9 -o "$W/c.cxt"
"$BIN" lattice "$W/c.cxt" -o "$W/out" --extents --text -q > "$W/text"; rc=$?
check '[ $rc -eq 0 ] && [ -f "$W/out/lattice.h5" ]' "lattice -o: exit $rc"
check '[ -z "$(ls "$W/out" | grep -v "^lattice.h5$")" ]' "stray files in the output directory: $(ls "$W/out")"
"$ORACLE" "$W/c.cxt" > "$W/want"
check 'same_set "$W/text" "$W/want"' "--text differs from brute force"
"$BIN" info "$W/out/lattice.h5" > "$W/info"
n=$(wc -l < "$W/want")
check 'grep -qE "^n_concepts +$n$" "$W/info"' "info does not say $n concepts: $(cat "$W/info")"
check 'grep -qE "^complete +1$" "$W/info"' "info does not say complete"
check 'grep -qE "^input_sha256 +$(sha256sum "$W/c.cxt" | cut -c1-64)$" "$W/info"' "input_sha256 differs from sha256sum"
# The output directory names its one result.
"$BIN" info "$W/out" > "$W/info-dir"
check 'cmp -s "$W/info" "$W/info-dir"' "info DIR differs from info DIR/lattice.h5"
mkdir -p "$W/empty-dir"
"$BIN" info "$W/empty-dir" > /dev/null 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "a directory with no result" "$W/err"' "info of an empty directory: exit $rc: $(cat "$W/err")"
"$BIN" info --text "$W/out/lattice.h5" > "$W/back"
check 'same_set "$W/back" "$W/want"' "info --text differs from the run's --text"
if command -v h5dump > /dev/null; then
  h5dump -H "$W/out/lattice.h5" > "$W/dump" 2>&1
  for d in '"offsets"' '"ids"' '"supports"' '"names"' 'GROUP "extents"' 'GROUP "intents"'; do
    check 'grep -q "$d" "$W/dump"' "h5dump does not show $d"
  done
  # Supports, by h5dump, against the extent sizes in the same file.
  values() { h5dump -d "$1" -y -w 0 "$W/out/lattice.h5" | sed -n '/DATA {/,/}/p' | tr ',' '\n' | tr -d ' ' | grep -E '^[0-9]+$'; }
  values /supports > "$W/supp"
  values /extents/offsets | awk 'NR>1{print $1-p} {p=$1}' > "$W/esz"
  check 'cmp -s "$W/supp" "$W/esz" && [ $(wc -l < "$W/supp") -eq $n ]' "supports differ from extent sizes"
fi
if python3 -c "import h5py" 2> /dev/null; then
  python3 "$(dirname "$0")/check_lattice_h5.py" "$W/out/lattice.h5" "$W/c.cxt" && ok || bad "h5py check"
fi
"$BIN" lattice "$W/c.cxt" -o "$W/out" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "exists; use --force" "$W/err"' "existing directory not refused: exit $rc"
"$BIN" lattice "$W/c.cxt" -o "$W/out" -q --force; rc=$?
check '[ $rc -eq 0 ] && [ -z "$(ls "$W/out" | grep -v "^lattice.h5$")" ]' "--force failed or left files"
# --text writes in pieces of 256 KiB: intents longer than one piece (60,000
# attributes, some 330 KB of text each) come out whole, against the
# intents this context has: {0..59999}, the even, the multiples of 3 and
# of 6 (the objects' rows and their intersection).
python3 -c "
for k in (1, 2, 3): print(' '.join(str(i) for i in range(0, 60000, k)))" > "$W/wide.dat"
python3 -c "
for k in (1, 2, 3, 6): print(' '.join(str(i) for i in range(0, 60000, k)))" > "$W/wide.want"
"$BIN" lattice "$W/wide.dat" -q --text -t 1 > "$W/wide.text"; rc=$?
check '[ $rc -eq 0 ] && same_set "$W/wide.text" "$W/wide.want"' "--text of intents past one piece: exit $rc, $(wc -c < "$W/wide.text") bytes"
# Ids at every digit count, to the largest label a .dat takes.
printf "0 9 10 99 100 999 1000 65535 100000 4294967294\n" > "$W/digits.dat"
check '[ "$("$BIN" lattice "$W/digits.dat" -q --text)" = "0 9 10 99 100 999 1000 65535 100000 4294967294" ]' \
  "--text of ids of 1 to 10 digits: $("$BIN" lattice "$W/digits.dat" -q --text 2>&1)"
# Quiet means quiet; without a terminal there is no progress line either.
"$BIN" lattice "$W/c.cxt" -q --text > /dev/null 2> "$W/err"
check '[ ! -s "$W/err" ]' "-q printed: $(cat "$W/err")"
"$BIN" lattice "$W/c.cxt" --text > /dev/null 2> "$W/err"
check '[ $(wc -l < "$W/err") -eq 1 ] && grep -q "concepts in" "$W/err"' "summary line: $(cat "$W/err")"
# An output directory that cannot be created: exit non-zero, message.
"$BIN" lattice "$W/c.cxt" -o /proc/nonexistent/out -q 2> "$W/err"; rc=$?
check '[ $rc -ne 0 ] && grep -q "cannot create the output directory" "$W/err"' "unwritable output: exit $rc"
# --compress: every workload's result deflated (shuffle + deflate, read by
# h5dump and fcbo-dist info without plugins), the same content, on one
# rank and (lattice, a master over parts) on two.
"$BIN" gen context --objects 2000 --attributes 40 --density 0.2 --seed 5 -o "$W/z.dat" > /dev/null
"$BIN" gen counts --rows 300 --cols 20 --groups 5 --seed 5 -o "$W/z.txt" > /dev/null
"$BIN" gen blobs --n 2000 --dims 2 --clusters 4 --seed 5 -o "$W/zp.txt" > /dev/null
"$BIN" gen tensor --shape 20x18x16 --rank 3 --seed 5 -o "$W/zt.h5" > /dev/null
for spec in "lattice|$W/z.dat" "spearman|$W/z.txt --pvalue 0.01" "dpc|$W/zp.txt --centers 4" "bcp|$W/zt.h5:/tensor --rank 3 --seed 1"; do
  w=${spec%%|*}; args=${spec#*|}
  "$BIN" $w $args -o "$W/plain-$w" -q -t 1 && "$BIN" $w $args -o "$W/z-$w" -q -t 1 --compress; rc=$?
  check '[ $rc -eq 0 ] && cmp -s <("$BIN" info --text "$W/plain-$w/$w.h5" | sort) <("$BIN" info --text "$W/z-$w/$w.h5" | sort)' \
        "$w --compress: exit $rc or other content"
  check 'h5dump -p -H "$W/z-$w/$w.h5" | grep -q "COMPRESSION DEFLATE" && ! h5dump -p -H "$W/plain-$w/$w.h5" | grep -q DEFLATE' \
        "$w --compress: no deflate filter"
done
check '[ $(stat -c %s "$W/z-lattice/lattice.h5") -lt $(( $(stat -c %s "$W/plain-lattice/lattice.h5") / 2 )) ]' \
      "lattice --compress: $(stat -c %s "$W/z-lattice/lattice.h5") bytes against $(stat -c %s "$W/plain-lattice/lattice.h5")"
mpirun -np 2 "$BIN" lattice "$W/z.dat" -o "$W/z2" -q --compress; rc=$?
check '[ $rc -eq 0 ] && cmp -s <("$BIN" info --text "$W/plain-lattice/lattice.h5" | sort) <("$BIN" info --text "$W/z2/lattice.h5" | sort)' \
      "lattice --compress on 2 ranks: exit $rc or other concepts"
# info --text --names: the intents by attribute name (tab-separated; a
# name with a blank stays whole), the same concepts as the ids.
printf 'B\n\n3\n3\n\no1\no2\no3\nred apple\ngreen\nsweet\nX.X\n.XX\nXX.\n' > "$W/n.cxt"
"$BIN" lattice "$W/n.cxt" -o "$W/nm" -q
"$BIN" info --text "$W/nm/lattice.h5" |
  awk 'BEGIN { n[0] = "red apple"; n[1] = "green"; n[2] = "sweet" }
       { s = ""; for (k = 1; k <= NF; k++) s = s (k > 1 ? "\t" : "") n[$k]; print s }' | sort > "$W/nm.want"
"$BIN" info --text --names "$W/nm/lattice.h5" | sort > "$W/nm.got"
check 'cmp -s "$W/nm.want" "$W/nm.got" && [ $(wc -l < "$W/nm.got") -eq 8 ]' "info --text --names: $(cat -A "$W/nm.got" | tr '\n' ' ')"
"$BIN" info --names "$W/nm/lattice.h5" > /dev/null 2>&1; rc=$?
check '[ $rc -eq 2 ]' "info --names without --text: exit $rc"
# The context's layout: auto takes the lists for a wide sparse context
# (the bitsets would be 100 MB) and the bitsets for a small dense one;
# the concepts are the same either way; a bad FD_LATTICE_LAYOUT is refused.
"$BIN" gen context --objects 50000 --attributes 8000 --density 0.001 --zipf 1 --seed 3 -o "$W/wide.dat" > /dev/null
"$BIN" lattice "$W/wide.dat" --min-support 4 -t 2 --stats --text 2> "$W/wide.err" | sort > "$W/wide.auto"
FD_LATTICE_LAYOUT=dense "$BIN" lattice "$W/wide.dat" --min-support 4 -t 2 --text 2> /dev/null | sort > "$W/wide.dense"
check 'grep -q "layout sparse" "$W/wide.err" && [ -s "$W/wide.auto" ] && cmp -s "$W/wide.auto" "$W/wide.dense"' \
      "layout auto on a wide sparse context: $(grep -o "layout [a-z]*" "$W/wide.err"), $(wc -l < "$W/wide.auto") against $(wc -l < "$W/wide.dense") concepts"
# The sparse layout's child extents at every list/bitset boundary (a list
# up to FD_LIST_MAX objects, else a bitset; a whole column read in place):
# the same concepts as the dense layout's.
"$BIN" gen context --objects 3000 --attributes 400 --density 0.01 --zipf 1 --seed 5 -o "$W/small.dat" > /dev/null
FD_LATTICE_LAYOUT=dense "$BIN" lattice "$W/small.dat" --min-support 2 -t 1 --text 2> /dev/null | sort > "$W/small.dense"
for lm in 0 1 2 7 100000; do
  FD_LATTICE_LAYOUT=sparse FD_LIST_MAX=$lm "$BIN" lattice "$W/small.dat" --min-support 2 -t 2 --text 2> /dev/null |
    sort > "$W/small.sparse"
  check '[ $(wc -l < "$W/small.dense") -gt 1000 ] && cmp -s "$W/small.dense" "$W/small.sparse"' \
        "sparse layout, FD_LIST_MAX=$lm: $(wc -l < "$W/small.sparse") against $(wc -l < "$W/small.dense") concepts"
done
"$BIN" lattice "$W/c.cxt" --stats --text 2>&1 > /dev/null | grep -q "layout dense"; rc=$?
check '[ $rc -eq 0 ]' "layout auto on a small context: not dense"
FD_LATTICE_LAYOUT=lists "$BIN" lattice "$W/c.cxt" --text > /dev/null 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "FD_LATTICE_LAYOUT" "$W/err"' "FD_LATTICE_LAYOUT=lists: exit $rc"
finish
