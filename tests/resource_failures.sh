# Resource failures, every workload: a file-size limit hit while the
# result is written (`ulimit -f`, as a full disk or a quota would), and an
# output directory that cannot be created, on one rank and (for the
# result writers that run on threads) on two.  Each must end with a non-zero
# exit and a message that names the cause, and leave nothing behind: no
# output directory, no temporary file; or, where committed checkpoint
# segments hold work worth keeping, DIR/W.checkpoint alone and a message
# that says how to --resume.  (A GPU too small for the problem
# and more ranks than GPUs need a GPU: not here.)
source "$(dirname "$0")/lib.sh" "$@"
W=$WORK
# Nothing left in DIR, or its checkpoint alone with the way to resume.
no_result() { # dir, stderr
  [ ! -e "$1" ] || { ls "$1" | grep -qxE "(lattice|spearman)\.checkpoint" && [ "$(ls -A "$1" | wc -l)" = 1 ] &&
    grep -q -- "--resume" "$2"; }
}
"$BIN" gen context --objects 3000 --attributes 40 --density 0.2 --seed 1 -o "$W/ctx.dat"
"$BIN" gen counts --rows 3000 --cols 30 --seed 1 -o "$W/m.txt"
"$BIN" gen blobs --n 20000 --dims 2 --clusters 5 --seed 1 -o "$W/p.txt"
"$BIN" gen tensor --shape 40x40x40 --rank 3 --seed 1 -o "$W/t.npy"
# name, 512-byte blocks allowed, command...
limited() {
  local name=$1 blocks=$2; shift 2
  rm -rf "$W/out"
  (ulimit -f "$blocks"; exec "$BIN" "$@" -o "$W/out" -q) 2> "$W/err"; rc=$?
  check '[ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q "File too large" "$W/err" && ! grep -q "HDF5-DIAG" "$W/err" &&
         no_result "$W/out" "$W/err"' \
    "$name under ulimit -f $blocks: exit $rc, $(ls "$W/out" 2> /dev/null | tr '\n' ' ')message: $(cat "$W/err")"
}
limited lattice 200 lattice "$W/ctx.dat"
# Its worker threads write the result: each silences HDF5 itself, and the
# lattice starts HDF5 only for the output directory (h5u_start).
limited lattice-threads 200 lattice "$W/ctx.dat" -t 2 --checkpoint-seconds 0
limited spearman 200 spearman "$W/m.txt" --pvalue 0.5
limited dpc 100 dpc "$W/p.txt"
limited bcp 4 bcp "$W/t.npy" --rank 20
# The same under mpirun, where writes happen on worker threads: one
# message naming the rank, not HDF5's error stack (a thread-safe HDF5
# keeps its printing switch per thread).  The limit leaves room for
# mpirun's own files; the outputs are larger.
"$BIN" gen context --objects 20000 --attributes 50 --density 0.25 --seed 2 -o "$W/big.dat"
"$BIN" gen counts --rows 20000 --cols 30 --seed 1 -o "$W/m2.txt"
for cmd in "lattice $W/big.dat" "spearman $W/m2.txt --pvalue 0.9"; do
  rm -rf "$W/out"
  (ulimit -f 40000; exec mpirun -np 2 "$BIN" $cmd -o "$W/out" -q) > /dev/null 2> "$W/err"; rc=$?
  check '[ $rc -ne 0 ] && grep -q "rank .* of 2: .*File too large" "$W/err" && ! grep -q "HDF5-DIAG" "$W/err" && no_result "$W/out" "$W/err"' \
    "mpirun -np 2 ${cmd%% *} under ulimit -f: exit $rc, $(ls "$W/out" 2> /dev/null | tr '\n' ' ')message: $(head -5 "$W/err")"
  # Space again: --resume finishes the run, with the result of one that
  # never failed (the lattice: spearman's 10^8 pairs would be 5 GB on
  # disk twice; resume.sh resumes spearman).
  if [ -e "$W/out/lattice.checkpoint" ] && [ "${cmd%% *}" = lattice ]; then
    # shellcheck disable=SC2086
    mpirun -np 2 "$BIN" $cmd --resume "$W/out" -q 2> "$W/err"; rc=$?
    # shellcheck disable=SC2086
    mpirun -np 2 "$BIN" $cmd -o "$W/ref" --force -q --checkpoint-seconds 0
    check '[ $rc -eq 0 ] && cmp -s <("$BIN" info --text "$W/out/lattice.h5" | sort) <("$BIN" info --text "$W/ref/lattice.h5" | sort)' \
          "${cmd%% *}: --resume after the full disk: exit $rc, $(cat "$W/err")"
    rm -rf "$W/ref"
  fi
done
# A real full disk: a tmpfs of a few pages (needs the right to mount,
# as root in a container; skipped otherwise).
T="$W/tmpfs"
mkdir -p "$T"
if mount -t tmpfs -o size=4k tmpfs "$T" 2> /dev/null; then
  umount "$T"
  for spec in "100k|lattice $W/ctx.dat" "100k|spearman $W/m.txt --pvalue 0.5" "50k|dpc $W/p.txt" "4k|bcp $W/t.npy --rank 20"; do
    cmd=${spec#*|}
    mount -t tmpfs -o "size=${spec%%|*}" tmpfs "$T"
    # shellcheck disable=SC2086
    "$BIN" $cmd -o "$T/out" -q 2> "$W/err"; rc=$?
    check '[ $rc -eq 1 ] && grep -q "No space left on device" "$W/err" && no_result "$T/out" "$W/err" && [ -z "$(find "$T" -name "*.tmp*")" ]' \
          "${cmd%% *} on a full tmpfs: exit $rc, left $(ls -R "$T" | tr '\n' ' '), message: $(cat "$W/err")"
    umount "$T"
  done
else
  echo "note: cannot mount a tmpfs here; the full-disk cases ran under ulimit -f only"
fi
# An output path under a regular file.
touch "$W/file"
for cmd in "lattice $W/ctx.dat" "spearman $W/m.txt --pvalue 0.05" "dpc $W/p.txt" "bcp $W/t.npy --rank 3"; do
  "$BIN" $cmd -o "$W/file/out" -q 2> "$W/err"; rc=$?
  check '[ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q "Not a directory" "$W/err"' "${cmd%% *} -o FILE/out: exit $rc: $(cat "$W/err")"
done
# Nothing temporary left anywhere in the scratch directory.
check '[ -z "$(find "$W" -name "*.tmp*")" ]' "temporary files left: $(find "$W" -name "*.tmp*")"
finish
