# fcbo-dist spearman on bad input and at its limits: FILE:LINE messages,
# exit 2, and no output directory left; --max-output refuses before
# writing; `info` reads the result; --help documents every option.
source "$(dirname "$0")/lib.sh" "$@"
W=$WORK
bad_case() { # name, file content (printf format), expected message
  name=$1 want=$3
  printf "$2" > "$W/$name"
  "$BIN" spearman "$W/$name" --pvalue 0.05 -o "$W/out-$name" -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q -- "$want" "$W/err" && [ ! -e "$W/out-$name" ]' "$name: exit $rc, message: $(cat "$W/err")"
}
bad_case ragged.txt '1 2 3 4\n1 2 3\n' "ragged.txt:2: 3 values, but the first row has 4"
bad_case word.txt '1 2 3 4\n1 x 3 4\n' "word.txt:2: column 2: 'x' is not a number"
bad_case glued.txt '1 2 3 4\n1 2 3abc 4\n' "glued.txt:2: column 3: '3abc' is not a number"
bad_case nan.txt '1 2 3 4\n1 nan 3 4\n' "nan.txt:2: column 2 is NaN or infinite (--drop-nan-rows"
bad_case inf.csv 'a,b,c\n1,2,3\n4,inf,6\n' "inf.csv:3: column 2 is NaN or infinite"
bad_case empty.txt '' "empty.txt: no data rows"
bad_case blank.txt '\n  \n' "blank.txt: no data rows"
bad_case two.txt '1 2\n3 4\n' "at least 3 observations"
bad_case badnpy.npy 'not numpy' "not a NumPy .npy file"
# Found by tests/fuzz: a NUL byte in a text file; a shape with a sign and
# one with no columns in a .npy header.
bad_case nul.txt '1 2 3 4\n1 2\0003 4\n' "byte 12 is NUL: not a text file"
# Binary inputs: a NumPy header written by hand, and HDF5 datasets of a
# lattice result (1-D: one column, too few observations for a p-value).
npy() { # file, header dict, payload bytes
  local h="$2" ; while [ $(( (10 + ${#h} + 1) % 16 )) -ne 0 ]; do h="$h "; done; h="$h"$'\n'
  { printf '\223NUMPY\001\000'; printf "\\x$(printf %02x ${#h})\\x00"; printf '%s' "$h"; printf "$3"; } > "$W/$1"
}
bad_npy() { # name, header, payload, expected message
  npy "$1" "$2" "$3"; name=$1 want=$4
  "$BIN" spearman "$W/$name" --pvalue 0.05 -o "$W/out-$name" -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q -- "$want" "$W/err" && [ ! -e "$W/out-$name" ]' "$name: exit $rc, message: $(cat "$W/err")"
}
bad_npy dtype.npy "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 3), }" '' "dtype '<c16' is not supported"
bad_npy fortran.npy "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }" '\001\002\003\004\005\006' "Fortran-ordered"
bad_npy threed.npy "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2, 3), }" '\001\002\003\004\005\006' "only 1-D and 2-D arrays"
bad_npy negative.npy "{'descr': '|u1', 'fortran_order': False, 'shape': (-1, 3), }" '' "bad shape in the .npy header"
bad_npy nocols.npy "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 0), }" '' "no columns"
bad_npy short.npy "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 3), }" '\001\002\003\004' "truncated: the header promises 3 rows of 3 values"
npy ok.npy "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 3), }" '\001\002\003\003\001\002\002\002\002'
"$BIN" spearman "$W/ok.npy" --check-input > "$W/ci" 2>&1
check 'grep -q "3 rows x 3 observations, 1 constant" "$W/ci"' "a hand-written .npy: $(cat "$W/ci")"
"$BIN" gen context --objects 20 --attributes 5 --density 0.5 -o "$W/l.dat"
"$BIN" lattice "$W/l.dat" -o "$W/lat" -q
for spec in "lat/lattice.h5:/nope|no dataset '/nope'" "lat/lattice.h5:/supports|at least 3 observations per row, not 1" "l.dat.h5:/x|l.dat.h5: cannot open: No such file"; do
  name=${spec%%|*} want=${spec#*|}
  "$BIN" spearman "$W/$name" --pvalue 0.05 -o "$W/out-h5" -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q -- "$want" "$W/err" && [ ! -e "$W/out-h5" ]' "$name: exit $rc, message: $(cat "$W/err")"
done
"$BIN" spearman "$W/missing.txt" --pvalue 0.05 -o "$W/out-m" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "missing.txt: cannot open" "$W/err" && [ ! -e "$W/out-m" ]' "missing file: exit $rc"
"$BIN" gen counts --rows 50 --cols 10 -o "$W/c.txt"
"$BIN" spearman "$W/c.txt" --pvalue 2 -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ]' "--pvalue 2 accepted"
"$BIN" spearman "$W/c.txt" --pvalue 0.1 --rho 0.5 -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "exclude each other" "$W/err"' "--pvalue with --rho accepted"
for args in "--top-k 3|--top-k writes its pairs to -o DIR" "--top-k 3 -o $W/tk --count-only|does not go with --count-only" \
            "--fdr 0|--fdr must be above 0" "--max-output 5X -o $W/mo|--max-output: '5X' is not a size" \
            "--top-k 2 --rho 0.5 -o $W/tk|exclude each other"; do
  want=${args#*|}
  # shellcheck disable=SC2086
  "$BIN" spearman "$W/c.txt" ${args%%|*} -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q -- "$want" "$W/err" && [ ! -e "$W/tk" ] && [ ! -e "$W/mo" ]' "${args%%|*}: exit $rc: $(cat "$W/err")"
done
"$BIN" gen counts --rows 40 --cols 12 -o "$W/y.txt"
"$BIN" spearman "$W/c.txt" --y "$W/y.txt" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "has 10 observations per row but" "$W/err"' "--y with other columns: exit $rc"
"$BIN" spearman "$W/c.txt" -o "$W/big" --pvalue 1 --max-output 1K -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "over --max-output" "$W/err" && [ ! -e "$W/big/spearman.h5" ]' "--max-output: exit $rc: $(cat "$W/err")"
# The counting pass is kept, and a resume that fails the same way keeps it
# too; one with room finishes it.
if [ -e "$W/big/spearman.checkpoint" ]; then
  "$BIN" spearman "$W/c.txt" --resume "$W/big" --pvalue 1 --max-output 1K -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && [ -e "$W/big/spearman.checkpoint/job.h5" ]' "--resume with a failing --max-output: exit $rc, checkpoint $(ls "$W/big/spearman.checkpoint" 2>&1)"
  "$BIN" spearman "$W/c.txt" --resume "$W/big" --pvalue 1 -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 0 ] && [ ! -e "$W/big/spearman.checkpoint" ] && [ -e "$W/big/spearman.h5" ]' "--resume with room: exit $rc: $(cat "$W/err")"
else
  bad "--max-output: no checkpoint kept"
fi
# Checkpoint options: bad values, and a checkpoint that is not one.
for v in abc -1; do
  "$BIN" spearman "$W/c.txt" --pvalue 0.05 -o "$W/ckv" --checkpoint-seconds "$v" -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q -- "--checkpoint-seconds" "$W/err" && [ ! -e "$W/ckv" ]' "--checkpoint-seconds $v: exit $rc: $(cat "$W/err")"
done
mkdir -p "$W/ckbad/spearman.checkpoint" && echo junk > "$W/ckbad/spearman.checkpoint/job.h5"
"$BIN" spearman "$W/c.txt" --pvalue 0.05 --resume "$W/ckbad" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "job.h5: not a readable HDF5 file" "$W/err"' "--resume over a corrupt job.h5: exit $rc: $(cat "$W/err")"
# -o needs a selection: there is no default that writes pairs; counting
# without -o, or --count-only, needs none.
"$BIN" spearman "$W/c.txt" -o "$W/nosel" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "say which with --pvalue" "$W/err" && [ ! -e "$W/nosel" ]' "-o without a selection: exit $rc: $(cat "$W/err")"
"$BIN" spearman "$W/c.txt" --count-only -o "$W/cnt" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 0 ] && [ -e "$W/cnt/spearman.h5" ]' "--count-only -o without a selection: exit $rc: $(cat "$W/err")"
# Progress in a log: done/total pairs, the percentage and the time left.
"$BIN" gen counts --rows 3000 --cols 30 --seed 4 -o "$W/prog.npy" > /dev/null
FD_PROGRESS_INTERVAL=0.001 "$BIN" spearman "$W/prog.npy" --count-only -t 1 2> "$W/prog.err"; rc=$?
check '[ $rc -eq 0 ] && grep -qE "^progress: [0-9]+/4498500 pairs \([0-9.]+%\), .* ETA [0-9]+ s$" "$W/prog.err"' \
      "progress lines: exit $rc: $(head -3 "$W/prog.err")"
# --check-input reads and reports, and writes nothing.
printf '1 2 3 4\n4 4 4 4\n2 1 0 9\n' > "$W/ci.txt"
"$BIN" spearman "$W/ci.txt" --check-input -o "$W/ci-out" > "$W/ci" 2>&1; rc=$?
check '[ $rc -eq 0 ] && grep -q "3 rows x 4 observations, 1 constant, 0 dropped" "$W/ci" && [ ! -e "$W/ci-out" ]' \
      "--check-input: exit $rc: $(cat "$W/ci")"
# A run, read back.
"$BIN" gen counts --rows 200 --cols 20 --groups 4 --seed 3 -o "$W/g.npy"
"$BIN" spearman "$W/g.npy" -o "$W/res" --pvalue 0.001 2> "$W/err"; rc=$?
check '[ $rc -eq 0 ] && grep -q "pairs selected" "$W/err"' "run: exit $rc: $(cat "$W/err")"
check '[ "$(ls "$W/res")" = spearman.h5 ]' "files: $(ls "$W/res")"
"$BIN" info "$W/res/spearman.h5" > "$W/info"
n=$(sed -n 's/^n_pairs *//p' "$W/info")
check '[ -n "$n" ] && [ "$n" -gt 0 ] && grep -qE "^complete +1$" "$W/info"' "info: $(cat "$W/info")"
"$BIN" info --text "$W/res/spearman.h5" > "$W/text"
check '[ $(wc -l < "$W/text") -eq "$n" ] && awk "\$1 >= \$2 || \$4 > 0.001 {bad=1} END {exit bad}" "$W/text"' \
      "info --text: $(head -3 "$W/text")"
# The selection is the pairs' own p: nothing above alpha, rows in range.
check 'awk "\$1 >= 200 || \$2 >= 200 || \$3 > 1 || \$3 < -1 {bad=1} END {exit bad}" "$W/text"' "pairs out of range"
# Several ranks: parts and a master that info reads, with a row per rank.
if command -v mpirun > /dev/null; then
  mpirun --oversubscribe -np 3 "$BIN" spearman "$W/g.npy" -o "$W/res3" --pvalue 0.001 -t 1 --stats 2> "$W/err"; rc=$?
  check '[ $rc -eq 0 ] && [ "$(files_of "$W/res3" spearman)" = "$(want_parts spearman 3)" ]' \
        "np=3: exit $rc, files $(ls "$W/res3" | tr '\n' ' ')"
  "$BIN" info "$W/res3/spearman.h5" > "$W/info3"
  check 'grep -qE "^n_pairs +$n$" "$W/info3" && [ $(grep -cE "^ +[0-2] +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+$" "$W/info3") -eq 3 ]' \
        "np=3 info: $(cat "$W/info3")"
  "$BIN" info --text "$W/res3/spearman.h5" > "$W/text3"
  check 'cmp -s <(sort "$W/text") <(sort "$W/text3")' "np=3 pairs differ from np=1"
  # Ranks that read different files (each rank its own name here; on a
  # cluster, a file that differs between nodes).  Other values: refused
  # after reading, by the digest of the ranks, on every rank (no rank left
  # waiting in a collective), nothing written.  The same ranks from other
  # bytes (every value doubled): the passes run, and the commit refuses, as
  # the output's SHA-256 would not be every part's, nothing left behind.
  python3 -c "
import numpy as np, sys
m = np.load(sys.argv[1])
o = m.copy(); o[0] = o[0][::-1] + 1
np.save(sys.argv[2], o)
np.save(sys.argv[3], m * 2)" "$W/g.npy" "$W/g-other.npy" "$W/g-twice.npy"
  cp "$W/g.npy" "$W/g-r0.npy"
  for kind in other twice; do
    cp "$W/g-$kind.npy" "$W/g-r1.npy"
    timeout 120 mpirun --oversubscribe -np 2 sh -c \
      'exec "$0" spearman "'"$W"'/g-r${OMPI_COMM_WORLD_RANK}.npy" -o "'"$W"'/res-$1" --pvalue 0.001 -t 1 -q' \
      "$BIN" "$kind" 2> "$W/err"; rc=$?
    if [ $kind = other ]; then want="this rank read other values than rank 0"; else want="differs from the file rank 0 read"; fi
    check '[ $rc -eq 2 ] && grep -q "rank 1 of 2: .*g-r1.npy.*$want" "$W/err" && [ ! -e "$W/res-$kind" ]' \
          "ranks reading different files ($kind): exit $rc, left $(ls "$W/res-$kind" 2> /dev/null | tr '\n' ' '): $(cat "$W/err")"
  done
fi
# A .npy and an HDF5 dataset read in many batches (the binary readers'
# pipeline: about 4 MiB a batch, 17,476 rows of 30 float64 here) against
# the same matrix as text (the text reader, written separately): the same
# pairs, rho and p, with NaN rows dropped in a middle batch, another
# and the last; without --drop-nan-rows, the first NaN row in input order
# is named, although the batch after it was already converted.
if python3 -c "import numpy, h5py" 2> /dev/null; then
  python3 - "$W" << 'PY'
import sys
import numpy as np
w = sys.argv[1]
rng = np.random.default_rng(5)
x = rng.poisson(2.0, (150000, 30)).astype(np.float64)
x[17500, 4] = np.nan    # batch 1
x[40000, 0] = np.inf    # batch 2
x[149999, 29] = np.nan  # the last row
np.save(w + "/big.npy", x)
import h5py
with h5py.File(w + "/big.h5", "w") as f:
    f["x"] = x
np.savetxt(w + "/big.txt", x, fmt="%.17g")
np.savetxt(w + "/y.txt", rng.poisson(2.0, (40, 30)), fmt="%d")
PY
  for f in big.txt big.npy big.h5:/x; do
    k=${f%%:*}
    "$BIN" spearman "$W/$f" --y "$W/y.txt" --drop-nan-rows --pvalue 0.01 -o "$W/r-$k" -q --force ||
      bad "spearman $f --drop-nan-rows failed"
    "$BIN" info --text "$W/r-$k/spearman.h5" | sort > "$W/pairs-$k"
    "$BIN" info "$W/r-$k/spearman.h5" | grep -E "^(dropped_rows|n_pairs|pairs_tested) " > "$W/counts-$k"
    [ "$k" = big.txt ] && continue
    check '[ -s "$W/pairs-$k" ] && cmp -s "$W/pairs-$k" "$W/pairs-big.txt"' \
          "$k and big.txt give different pairs ($(wc -l < "$W/pairs-$k") and $(wc -l < "$W/pairs-big.txt"))"
    check 'cmp -s "$W/counts-$k" "$W/counts-big.txt" && grep -qE "^dropped_rows +3$" "$W/counts-$k"' \
          "$k counts: $(cat "$W/counts-$k") against $(cat "$W/counts-big.txt")"
    "$BIN" spearman "$W/$f" --check-input 2> "$W/err" > /dev/null; rc=$?
    check '[ $rc -eq 2 ] && grep -q "$f: row 17500, column 5 is NaN or infinite" "$W/err"' \
          "$f with NaN: exit $rc: $(cat "$W/err")"
  done
fi
# An HDF5 dataset of strings: the batch that cannot be read as numbers is
# named, exit 2, nothing written.
if python3 -c "import h5py" 2> /dev/null; then
  python3 -c "import h5py, numpy as np, sys; h5py.File(sys.argv[1], 'w')['s'] = np.array([[b'a', b'b', b'c']] * 4)" \
    "$W/str.h5"
  "$BIN" spearman "$W/str.h5:/s" --pvalue 0.05 -o "$W/out-str" -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "str.h5:/s: rows from 0 cannot be read as numbers" "$W/err" && [ ! -e "$W/out-str" ]' \
        "a dataset of strings: exit $rc: $(cat "$W/err")"
  python3 -c "import h5py, numpy as np, sys; h5py.File(sys.argv[1], 'w')['c'] = np.zeros((2, 3, 4))" "$W/cube.h5"
  "$BIN" spearman "$W/cube.h5:/c" --pvalue 0.05 -o "$W/out-cube" -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "cube.h5:/c: only 1-D and 2-D datasets are read (this one has 3" "$W/err" &&
         [ ! -e "$W/out-cube" ]' "a 3-D dataset: exit $rc: $(cat "$W/err")"
fi
"$BIN" spearman --help > "$W/help"
for o in --pvalue --rho --count-only --y --drop-nan-rows --max-output --threads --backend --stats --force; do
  check 'grep -q -- "$o" "$W/help"' "--help does not mention $o"
done
finish
