# Bad input: "fcbo-dist: error: FILE:LINE: what", exit status 2, and no
# output directory left behind.
source "$(dirname "$0")/lib.sh" "$@"
W=$WORK
expect_bad() { # file pattern [extra args]
  local f=$1 pat=$2; shift 2
  "$BIN" lattice "$f" -o "$W/out" -q "$@" 2> "$W/err" > /dev/null
  local rc=$?
  check '[ $rc -eq 2 ]' "$f: exit status $rc, expected 2"
  check 'grep -qE "^fcbo-dist: error: $pat" "$W/err"' "$f: message '$(cat "$W/err")' does not match '$pat'"
  check '[ ! -e "$W/out" ]' "$f: output directory left behind"
  rm -rf "$W/out"
}
: > "$W/empty.dat";  expect_bad "$W/empty.dat" ".*/empty.dat:1: empty file"
: > "$W/empty.cxt";  expect_bad "$W/empty.cxt" ".*/empty.cxt:1: empty file"
: > "$W/empty.csv";  expect_bad "$W/empty.csv" ".*/empty.csv:1: empty file"
expect_bad "$W/missing.cxt" ".*/missing.cxt: cannot open"
printf 'B\n\n3\n2\n\no1\no2\no3\na\nb\nX.\n.X\n' > "$W/short.cxt"
expect_bad "$W/short.cxt" ".*/short.cxt:12: file ends after 2 of 3 object rows"
printf 'B\n\n2\n2\n\no1\no2\na\nb\nX.\n.o\n' > "$W/mark.cxt"
expect_bad "$W/mark.cxt" ".*/mark.cxt:11: column 2: mark 'o' is neither 'X' nor '.'"
printf 'B\n\n2\n3\n\no1\no2\na\nb\nc\nX.\n.XX\n' > "$W/width.cxt"
expect_bad "$W/width.cxt" ".*/width.cxt:11: row of object 1 has 2 marks, expected 3"
printf 'B\n\n1\n2\n\no1\na\nb\nX.\n.X\n' > "$W/extra.cxt"
expect_bad "$W/extra.cxt" ".*/extra.cxt:10: more rows than the 1 objects declared"
printf 'B\n\n2\n2\n\no1\n' > "$W/names.cxt"
expect_bad "$W/names.cxt" ".*/names.cxt:6: file ends after 1 of 4 object and attribute names"
printf 'B\n\nmany\n2\n' > "$W/count.cxt"
expect_bad "$W/count.cxt" ".*/count.cxt:3: 'many' is not a count of objects"
printf 'A\n' > "$W/magic.cxt"
expect_bad "$W/magic.cxt" ".*/magic.cxt:1: not a Burmeister context"
printf 'B\n\n4000000000\n4000000000\n' > "$W/huge.cxt"
expect_bad "$W/huge.cxt" ".*/huge.cxt:4: 4000000000 objects x 4000000000 attributes need .* GiB"
printf '1 2 3\n4 x 6\n' > "$W/word.dat"
expect_bad "$W/word.dat" ".*/word.dat:2: 'x' is not an attribute id"
printf '1 2 3\n4 -5\n' > "$W/neg.dat"
expect_bad "$W/neg.dat" ".*/neg.dat:2: '-5' is not an attribute id"
printf '1 2.5\n' > "$W/float.dat"
expect_bad "$W/float.dat" ".*/float.dat:1: '2.5' is not an attribute id"
printf '1,0\n0,2\n' > "$W/two.csv"
expect_bad "$W/two.csv" ".*/two.csv:2: cell 2 is '2', not 0 or 1"
printf '1,0\n0,1,1\n' > "$W/ragged.csv"
expect_bad "$W/ragged.csv" ".*/ragged.csv:2: 3 cells, expected 2"
printf 'a\tb\n1\tyes\n' > "$W/yes.tsv"
expect_bad "$W/yes.tsv" ".*/yes.tsv:2: cell 2 is 'yes', not 0 or 1"
printf '1 2\n' > "$W/noext"
expect_bad "$W/noext" ".*/noext: cannot tell the format"
# Usage errors: exit 2 as well, and nothing created.
printf '1 2\n' > "$W/ok.dat"
for args in "--threads 0" "--threads x" "--min-support -1" "--min-support 101%" "--format xls" "--backend tpu" "--bogus"; do
  "$BIN" lattice "$W/ok.dat" -o "$W/out" $args -q > /dev/null 2> "$W/err"
  rc=$?
  check '[ $rc -eq 2 ]' "lattice $args: exit status $rc, expected 2"
  check '[ ! -e "$W/out" ]' "lattice $args: output directory left behind"
done
# The default backend comes from FD_BACKEND, and a wrong one is named.
FD_BACKEND=tpu "$BIN" lattice "$W/ok.dat" -q > /dev/null 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "backend .tpu. is not available" "$W/err"' "FD_BACKEND=tpu: exit $rc, $(cat "$W/err")"
# The GPU backend where there is no GPU (or no CUDA in the build): a clear
# refusal, exit 2, nothing written.
if ! nvidia-smi -L > /dev/null 2>&1; then
  "$BIN" lattice "$W/ok.dat" --backend cuda -o "$W/out" -q > /dev/null 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "cannot run here\|not available" "$W/err" && [ ! -e "$W/out" ]' \
        "--backend cuda without a GPU: exit $rc, $(cat "$W/err")"
  printf '1 2 3 4\n4 3 2 1\n1 3 2 4\n' > "$W/m.txt"
  "$BIN" spearman "$W/m.txt" --backend cuda --pvalue 0.05 -o "$W/out" -q > /dev/null 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "cannot run here\|not available" "$W/err" && [ ! -e "$W/out" ]' \
        "spearman --backend cuda without a GPU: exit $rc, $(cat "$W/err")"
fi
# Every GPU hidden, on any machine: the same refusal before the run,
# though the lattice's threads would finish this search before a GPU
# started (FD_GPU_HOST_START); a build without CUDA refuses by name.
rm -rf "$W/out"
CUDA_VISIBLE_DEVICES= "$BIN" lattice "$W/ok.dat" --backend cuda -t 4 -o "$W/out" -q > /dev/null 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "cannot run here\|not available" "$W/err" && [ ! -e "$W/out" ]' \
      "--backend cuda with CUDA_VISIBLE_DEVICES empty: exit $rc, $(cat "$W/err")"

FD_BACKEND=tpu "$BIN" spearman "$W/ok.dat" -q > /dev/null 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "backend .tpu. is not available" "$W/err"' "spearman FD_BACKEND=tpu: exit $rc, $(cat "$W/err")"
printf '1 2 3 4\n4 3 2 1\n1 3 2 4\n' > "$W/m4.txt"
for v in x -1 12abc ""; do
  rm -rf "$W/out"
  FD_SPEARMAN_KEEP_PAIRS=$v "$BIN" spearman "$W/m4.txt" --pvalue 0.05 -o "$W/out" -q > /dev/null 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "FD_SPEARMAN_KEEP_PAIRS" "$W/err" && [ ! -e "$W/out" ]' \
        "FD_SPEARMAN_KEEP_PAIRS='$v': exit $rc, $(cat "$W/err")"
done
# Knobs read where a failure cannot be passed on are checked before any
# work: a wrong one stops the command with exit 2 and its name, under
# mpirun too; the others where they are read (FD_LIST_MAX).
for kv in FD_DPC_GRID=of FD_DPC_TREE=on FD_NCCL=yes FD_SPEARMAN_SCALAR=2 FD_GPU_RELEASE=later FD_GPU_HOST_START=1 \
          FD_BCP_GPU_SWEEP=gpu \
          FD_PROGRESS_INTERVAL=0 \
          FD_PROGRESS_INTERVAL=1s FD_LIST_MAX=1.5 FD_LIST_MAX=-1; do
  rm -rf "$W/out"
  env "$kv" "$BIN" lattice "$W/ok.dat" -o "$W/out" -q > /dev/null 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "^fcbo-dist: error: $kv: expected" "$W/err" && [ ! -e "$W/out" ]' \
        "$kv: exit $rc, $(cat "$W/err")"
done
if command -v mpirun > /dev/null; then
  rm -rf "$W/out"
  FD_NCCL=no mpirun -np 2 -x FD_NCCL "$BIN" lattice "$W/ok.dat" -o "$W/out" -q > /dev/null 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "FD_NCCL=no: expected on or off" "$W/err" && [ ! -e "$W/out" ]' \
        "FD_NCCL=no under mpirun: exit $rc, $(cat "$W/err")"
fi
for kv in FD_PROGRESS_INTERVAL=0.5 FD_DPC_GRID=off FD_DPC_TREE=always FD_NCCL=on FD_SPEARMAN_SCALAR=1 FD_GPU_RELEASE=exit \
          FD_GPU_HOST_START=on FD_BCP_GPU_SWEEP=host FD_LIST_MAX=0; do
  rm -rf "$W/out"
  env "$kv" "$BIN" lattice "$W/ok.dat" -o "$W/out" -q > /dev/null 2> "$W/err"; rc=$?
  check '[ $rc -eq 0 ] && [ -s "$W/out/lattice.h5" ]' "$kv: exit $rc, $(cat "$W/err")"
done
"$BIN" nosuchcommand 2> /dev/null; rc=$?
check '[ $rc -eq 2 ]' "unknown command: exit status $rc"
"$BIN" info "$W/ok.dat" > /dev/null 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "not an HDF5 file" "$W/err"' "info on a non-HDF5 file: exit $rc, $(cat "$W/err")"
finish
