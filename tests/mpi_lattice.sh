# mpirun -np P fcbo-dist lattice: for P = 1..4 and 1 or 2 threads per rank,
# the concepts read back through the master file equal the brute-force
# oracle and the single-process run, each exactly once; the parts and the
# master are what docs/formats.md says; a failing rank fails the job with
# its rank named and leaves no result behind.
source "$(dirname "$0")/lib.sh" "$@"
command -v mpirun > /dev/null || { echo "skipped: no mpirun"; exit 77; }
W=$WORK
MPI="mpirun --oversubscribe"
"$BIN" gen context --objects 300 --attributes 16 --density 0.35 --seed 5 -o "$W/a.dat"
"$BIN" gen context --objects 120 --attributes 18 --density 0.6 --seed 6 -o "$W/b.cxt"
"$BIN" gen context --objects 500 --attributes 15 --density 0.25 --seed 7 -o "$W/c.csv"
# name, file, extra options, oracle minimum support
cases=("a $W/a.dat - 0" "b $W/b.cxt --extents 0" "c $W/c.csv --min-support=4 4")
for c in "${cases[@]}"; do
  set -- $c; name=$1; ctx=$2; opt=$3; ms=$4
  [ "$opt" = - ] && opt=
  "$ORACLE" "$ctx" "$ms" > "$W/$name.want"
  "$BIN" lattice "$ctx" $opt --text -q -t 2 > "$W/$name.single"
  check 'same_set "$W/$name.single" "$W/$name.want"' "$name: the single-process run differs from brute force"
  n=$(wc -l < "$W/$name.want")
  for np in 1 2 3 4; do
    for t in 1 2; do
      out=$W/$name.$np.$t
      $MPI -np $np "$BIN" lattice "$ctx" $opt -o "$out" -q -t $t 2> "$W/err"; rc=$?
      check '[ $rc -eq 0 ]' "$name np=$np t=$t: exit $rc: $(cat "$W/err")"
      "$BIN" info --text "$out/lattice.h5" > "$W/got"
      check 'same_set "$W/got" "$W/$name.want"' \
            "$name np=$np t=$t: concepts differ from brute force"
      check '[ -z "$(sort "$W/got" | uniq -d)" ] && [ $(wc -l < "$W/got") -eq $n ]' \
            "$name np=$np t=$t: $(wc -l < "$W/got") concepts ($n expected) or duplicates"
      "$BIN" info "$out/lattice.h5" > "$W/info"
      check 'grep -qE "^n_concepts +$n$" "$W/info" && grep -qE "^ranks +$np$" "$W/info" && grep -qE "^complete +1$" "$W/info"' \
            "$name np=$np t=$t: metadata: $(cat "$W/info")"
      if [ $np -gt 1 ]; then
        check '[ "$(files_of "$out" lattice)" = "$(want_parts lattice $np)" ]' "$name np=$np: files $(ls "$out" | tr '\n' ' ')"
        # The per-rank table adds up.
        sum=$(awk '$1 ~ /^[0-9]+$/ && NF == 5 {s += $2} END {print s}' "$W/info")
        check '[ "$sum" = "$n" ]' "$name np=$np: per-rank concepts sum to $sum, not $n"
      fi
    done
  done
done

# h5py (an independent reader) through the master of a 3-rank run with extents.
if python3 -c "import h5py" 2> /dev/null; then
  python3 "$(dirname "$0")/check_lattice_h5.py" "$W/b.3.2/lattice.h5" "$W/b.cxt" && ok || bad "h5py check of a master file"
fi
# h5dump sees one dataset over the parts.
if command -v h5dump > /dev/null; then
  n=$(wc -l < "$W/a.want")
  check 'h5dump -H "$W/a.4.1/lattice.h5" | grep -A3 "DATASET \"supports\"" | grep -q "( $n )"' "h5dump: /supports is not one dataset of $n"
fi

# --text with several ranks: rank 0 prints the whole lattice once.
$MPI -np 3 "$BIN" lattice "$W/a.dat" -o "$W/txt" -q -t 1 --text > "$W/got"; rc=$?
check '[ $rc -eq 0 ] && same_set "$W/got" "$W/a.want"' "np=3 --text: exit $rc or different concepts"
$MPI -np 2 "$BIN" lattice "$W/a.dat" -q --text > /dev/null 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "needs -o DIR" "$W/err"' "np=2 --text without -o: exit $rc"

# --stats prints the counters and one row per rank.
$MPI -np 3 "$BIN" lattice "$W/a.dat" -o "$W/st" -t 1 --stats 2> "$W/err" > /dev/null
check 'grep -q "3 ranks x 1 thread" "$W/err" && [ $(grep -cE "^ +[0-2] +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+$" "$W/err") -eq 3 ]' \
      "--stats under np=3: $(cat "$W/err")"

# In a log (no terminal) rank 0 prints progress lines that count every
# rank's concepts; a short interval makes them appear in a short run.
"$BIN" gen context --objects 3000 --attributes 44 --density 0.3 --seed 8 -o "$W/slow.dat"
FD_PROGRESS_INTERVAL=0.1 $MPI -np 2 "$BIN" lattice "$W/slow.dat" -t 1 2> "$W/err" > /dev/null; rc=$?
check '[ $rc -eq 0 ] && grep -qE "^progress: [0-9]+ concepts, .* s$" "$W/err" && [ $(grep -c "^progress:" "$W/err") -ge 1 ]' \
      "progress lines in a log: exit $rc: $(head -3 "$W/err")"

# --force over a 4-rank result with 2 ranks: the replaced parts go once
# the new result is in place, and nothing of the user's or of another
# workload does.
touch "$W/a.4.1/notes.txt" "$W/a.4.1/part-00003.h5" "$W/a.4.1/spearman.0123456789abcdef.part-00000.h5"
$MPI -np 2 "$BIN" lattice "$W/a.dat" -o "$W/a.4.1" --force -q -t 1; rc=$?
check '[ $rc -eq 0 ] && [ "$(files_of "$W/a.4.1" lattice)" = "$(want_parts lattice 2 notes.txt part-00003.h5 spearman.0123456789abcdef.part-00000.h5)" ]' \
      "--force with fewer ranks: exit $rc, files $(ls "$W/a.4.1" | tr '\n' ' ')"
rm "$W/a.4.1/notes.txt" "$W/a.4.1/part-00003.h5" "$W/a.4.1/spearman.0123456789abcdef.part-00000.h5"

# The parts are found relative to the master: a moved directory still reads.
mv "$W/b.2.1" "$W/moved"
(cd / && "$BIN" info --text "$W/moved/lattice.h5") > "$W/got" 2> "$W/err"
check 'same_set "$W/got" "$W/b.want"' "moved result directory: $(cat "$W/err")"
if python3 -c "import h5py" 2> /dev/null; then
  python3 "$(dirname "$0")/check_lattice_h5.py" "$W/moved/lattice.h5" "$W/b.cxt" > /dev/null && ok || bad "h5py on a moved master"
fi

# A part whose intents were cut short (rewritten 2 ids shorter, complete
# and of the same input otherwise): refused, not read past its end.
if python3 -c "import h5py" 2> /dev/null; then
  # The part with the most ids (how the ranks shared the tree varies).
  cp -r "$W/a.3.1" "$W/cut"
  cut=$(python3 -c "
import h5py, sys
parts = sorted(sys.argv[1:], key=lambda p: -h5py.File(p)['intents/ids'].shape[0])
with h5py.File(parts[0], 'r+') as f:
    v = f['intents/ids'][:]
    del f['intents/ids']
    f['intents/ids'] = v[:-2]
print(parts[0].rsplit('/', 1)[-1])" "$W"/cut/lattice.*.part-*.h5)
  "$BIN" info --text "$W/cut/lattice.h5" > /dev/null 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "intents/ids reads past the end of intents/ids in its part $cut" "$W/err"' \
    "a part cut short ($cut) not detected: exit $rc: $(cat "$W/err")"
fi

# A missing part: readers refuse the master rather than read zeros.
rm "$(part_of "$W/a.3.1" lattice 1)"
"$BIN" info --text "$W/a.3.1/lattice.h5" > /dev/null 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "part-00001.h5 is missing" "$W/err"' "missing part not detected: exit $rc: $(cat "$W/err")"

# Rank 2 cannot commit its part (the name is taken by a directory): the job
# exits non-zero, names rank 2 once, and leaves no lattice.h5 and no part,
# only the checkpoint of its work; once the name is free, --resume
# finishes it (each rank had turned its largest segment into its part:
# those subtrees run again).
mkdir -p "$W/fail/lattice.00000000000fa11d.part-00002.h5"
FD_TEST_RUN_ID=00000000000fa11d $MPI -np 3 "$BIN" lattice "$W/a.dat" -o "$W/fail" --force -q -t 1 2> "$W/err"; rc=$?
check '[ $rc -ne 0 ] && grep -q "rank 2 of 3:" "$W/err" && [ $(grep -c "fcbo-dist: error" "$W/err") -eq 1 ]' \
      "failing rank 2: exit $rc: $(cat "$W/err")"
check '[ "$(ls -A "$W/fail" | tr "\n" " ")" = "lattice.00000000000fa11d.part-00002.h5 lattice.checkpoint " ] && grep -q -- "--resume" "$W/err"' \
      "failing rank 2 left: $(ls -A "$W/fail" | tr '\n' ' ')"
rmdir "$W/fail/lattice.00000000000fa11d.part-00002.h5"
$MPI -np 3 "$BIN" lattice "$W/a.dat" --resume "$W/fail" -q -t 1 2> "$W/err"; rc=$?
check '[ $rc -eq 0 ] && same_set <("$BIN" info --text "$W/fail/lattice.h5") <("$BIN" lattice "$W/a.dat" --text -q)' \
      "resume after the failed commit: exit $rc: $(cat "$W/err")"
# A bad input fails every rank the same way: exit 2, no directory.
$MPI -np 2 "$BIN" lattice "$W/missing.dat" -o "$W/out2" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "missing.dat: cannot open" "$W/err" && [ ! -e "$W/out2" ]' "np=2 missing input: exit $rc"
# Ranks that read different files (each rank its own name here; on a
# cluster, a file that differs between nodes): every rank stops at the
# check (fd_mpi_same_hash, shared with dpc and bcp), the differing rank
# named; none is left waiting in a collective (timeout), no directory.
"$BIN" gen blobs --n 400 --dims 2 --clusters 3 --seed 1 -o "$W/p-r0.txt" > /dev/null
"$BIN" gen blobs --n 400 --dims 2 --clusters 3 --seed 2 -o "$W/p-r1.txt" > /dev/null
cp "$W/a.dat" "$W/ctx-r0.dat"
cp "$W/c.csv" "$W/ctx-r1.dat"
for w in "lattice ctx" "dpc p"; do
  set -- $w
  ext=dat; [ $1 = dpc ] && ext=txt
  timeout 120 $MPI -np 2 sh -c 'exec "$0" "$1" "$2-r${OMPI_COMM_WORLD_RANK}.$3" -o "$4" -q' \
    "$BIN" $1 "$W/$2" $ext "$W/diff-$1" 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "rank 1 of 2: .*$2-r1.$ext differs from the file rank 0 read" "$W/err" && [ ! -e "$W/diff-$1" ]' \
        "$1, ranks reading different files: exit $rc, left $(ls "$W/diff-$1" 2> /dev/null | tr '\n' ' '): $(cat "$W/err")"
done
finish
