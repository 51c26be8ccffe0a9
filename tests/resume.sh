# --checkpoint-seconds and --resume: rank 1 of `mpirun -np 3` is killed
# with SIGKILL after it committed K segments (the FD_TEST_KILL_AFTER
# hook); the job exits non-zero and leaves no result; `--resume DIR`
# (on another number of ranks) then finishes with the same result as an
# uninterrupted run, and the records the killed run committed are not run
# again: the resumed run reports exactly them as resumed, and runs only
# the others.  Also: parameters that differ are refused, and so is a
# directory without a checkpoint.
source "$(dirname "$0")/lib.sh" "$@"
W=$WORK
if ! python3 -c "import numpy, h5py" 2> /dev/null; then
  python3 -m pip install -q numpy h5py > "$W/pip.log" 2>&1 ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-numpy python3-h5py > "$W/apt.log" 2>&1
fi
HERE=$(dirname "$0")

# Records held by the committed segments of DIR/W.checkpoint (stage S).
done_records() {
  python3 - "$1" "$2" << 'EOF'
import glob, sys, h5py
ids = set()
for p in glob.glob(sys.argv[1] + "/*.checkpoint/seg-*.h5"):
    with h5py.File(p) as f:
        if f.attrs["stage"] == int(sys.argv[2]):
            ids.update(f["records"][:].tolist())
print(len(ids))
EOF
}

# A killed run: exit status, no master, a checkpoint with committed work.
killed() { # dir, rc
  kdir=$1 krc=$2
  check '[ "$krc" -ne 0 ] && [ ! -e "$kdir/spearman.h5" ] && [ ! -e "$kdir/lattice.h5" ] && [ -n "$(ls "$kdir"/*.checkpoint/job.h5 2> /dev/null)" ]' \
        "killed run into $kdir: exit $krc, left $(ls "$kdir" 2> /dev/null | tr '\n' ' ')"
  wait_lock_free "$kdir"
}

# ---------------- spearman ----------------
"$BIN" gen counts --rows 2500 --cols 12 --groups 30 --seed 7 -o "$W/m.npy"
pairs_of() { # file -> sorted "i j rho p" lines
  python3 -c "
import sys, h5py
f = h5py.File(sys.argv[1])
for t in sorted(zip(*(f['pairs/' + c][:].tolist() for c in ('i', 'j', 'rho', 'p'))), key=lambda t: t[:2]):
    print(*t)
print('tested', f.attrs['pairs_tested'], 'selected', f.attrs['n_pairs'], 'hist', *f['histogram'][:].tolist())
" "$1"
}
attr() { python3 -c "import sys, h5py; v = h5py.File(sys.argv[1]).attrs[sys.argv[2]]; print(v.decode() if isinstance(v, bytes) else v)" "$1" "$2"; }
tiles() { python3 -c "import sys, h5py; print(int(h5py.File(sys.argv[1])['ranks/tiles'][:].sum()))" "$1"; }

# Selection | the stage rank 1 dies in | the passes over the records.
# --pvalue keeps its pairs in pass 1 (stage 1 only); a small
# FD_SPEARMAN_KEEP_PAIRS makes --rho run the writing pass (stage 2),
# killed there; --fdr adds its collecting pass (c: not checkpointed, all
# records again) when killed before its cutoff was saved, and skips it
# when killed after; --top-k has only the writing pass.
for sel in "--pvalue 1e-3|1|1" "--rho 0.3|2|12" "--fdr 0.01|1|1c2" "--fdr 0.01|2|12" "--top-k 3|2|2" \
           "--count-only --rho 0.5|1|1"; do
  IFS='|' read -r args kstage passes <<< "$sel"
  name=$(echo "$args" | tr -dc 'a-z0-9')$kstage
  # shellcheck disable=SC2086
  "$BIN" spearman "$W/m.npy" $args -o "$W/ref-$name" -t 2 -q --checkpoint-seconds 0
  # shellcheck disable=SC2086
  # --top-k has 10 records for 6 workers: rank 1 may get only one.
  kafter=2; [ "$passes" = 2 ] && kafter=1
  FD_SPEARMAN_KEEP_PAIRS=20000 FD_TEST_KILL_AFTER=1:$kafter:$kstage mpirun -np 3 "$BIN" spearman "$W/m.npy" $args \
    -o "$W/sp-$name" -t 2 -q --checkpoint-seconds 1e-9 > /dev/null 2>&1
  killed "$W/sp-$name" $?
  d1=$(done_records "$W/sp-$name" 1) d2=$(done_records "$W/sp-$name" 2)
  total=$(python3 -c "import sys, h5py; print(len(h5py.File(sys.argv[1])['records/start']) - 1)" "$W/sp-$name/spearman.checkpoint/job.h5")
  # shellcheck disable=SC2086
  FD_SPEARMAN_KEEP_PAIRS=20000 mpirun -np 2 "$BIN" spearman "$W/m.npy" $args --resume "$W/sp-$name" -t 1 -q 2> "$W/err"
  rc=$?
  check '[ $rc -eq 0 ] && [ ! -e "$W/sp-$name/spearman.checkpoint" ]' "spearman $args: resume exit $rc: $(cat "$W/err")"
  check 'cmp -s <(pairs_of "$W/ref-$name/spearman.h5") <(pairs_of "$W/sp-$name/spearman.h5")' \
        "spearman $args: the resumed result differs from an uninterrupted run"
  main=$d1; [ "$passes" = 2 ] && main=$d2
  killed_in=$d1; [ "$kstage" = 2 ] && killed_in=$d2
  resumed=$(attr "$W/sp-$name/spearman.h5" resumed_records)
  # The other ranks may finish every record before mpirun stops them
  # (--top-k has 10): then the resumed run has nothing left to run.
  check '[ "$killed_in" -gt 0 ] && [ "$killed_in" -le "$total" ] && [ "$resumed" -eq "$main" ]' \
        "spearman $args: $d1 + $d2 of $total records were committed, the resumed run took $resumed as done"
  # Exactly the records not committed ran (the FDR collection: all).
  want=0
  case $passes in *1*) want=$((want + total - d1)) ;; esac
  case $passes in *c*) want=$((want + total)) ;; esac
  case $passes in *2*) want=$((want + total - d2)) ;; esac
  ran=$(tiles "$W/sp-$name/spearman.h5")
  check '[ "$ran" -eq "$want" ]' "spearman $args: the resumed run ran $ran records, expected $want"
done

# ---------------- lattice ----------------
"$BIN" gen context --objects 300 --attributes 40 --density 0.3 --seed 5 -o "$W/c.cxt"
"$BIN" lattice "$W/c.cxt" -o "$W/lref" -t 2 -q --checkpoint-seconds 0
"$BIN" info --text "$W/lref/lattice.h5" | sort > "$W/lref.txt"
subtrees() { python3 -c "import sys, h5py; print(int(h5py.File(sys.argv[1])['ranks/subtrees'][:].sum()))" "$1"; }
# Consumers share a segment and leave it one by one as checkpoints fall
# due mid-run (each segment must hold whole subtrees only): 5 threads,
# a checkpoint every few milliseconds, the same concepts.
"$BIN" lattice "$W/c.cxt" -o "$W/lsh" -t 5 -q --checkpoint-seconds 0.003
"$BIN" info --text "$W/lsh/lattice.h5" | sort > "$W/lsh.txt"
check 'cmp -s "$W/lref.txt" "$W/lsh.txt"' "lattice: 5 threads sharing checkpoint segments: another result"
FD_TEST_KILL_AFTER=1:3:1 mpirun -np 3 "$BIN" lattice "$W/c.cxt" -o "$W/lat" -t 2 -q --checkpoint-seconds 1e-9 \
  > /dev/null 2>&1
killed "$W/lat" $?
d1=$(done_records "$W/lat" 1)
total=$(python3 -c "import sys, h5py; print(len(h5py.File(sys.argv[1])['records/start']) - 1)" "$W/lat/lattice.checkpoint/job.h5")
mpirun -np 2 "$BIN" lattice "$W/c.cxt" --resume "$W/lat" -t 1 -q 2> "$W/err"; rc=$?
check '[ $rc -eq 0 ] && [ ! -e "$W/lat/lattice.checkpoint" ]' "lattice: resume exit $rc: $(cat "$W/err")"
"$BIN" info --text "$W/lat/lattice.h5" | sort > "$W/lat.txt"
check 'cmp -s "$W/lref.txt" "$W/lat.txt"' "lattice: the resumed concepts differ from an uninterrupted run's"
resumed=$(attr "$W/lat/lattice.h5" resumed_subtrees) ran=$(subtrees "$W/lat/lattice.h5")
check '[ "$d1" -gt 0 ] && [ "$d1" -le "$total" ] && [ "$resumed" -eq "$d1" ] && [ "$ran" -eq $((total - d1)) ]' \
      "lattice: $d1 of $total subtrees committed; the resumed run took $resumed as done and ran $ran"
# One rank, one thread: the root runs whole until the first checkpoint is
# due, with no split of the tree first: one subtree, one segment.  With a
# checkpoint due at once, it stops at its first child and leaves the
# root's children as the list; killed after two of them, the resumed run
# takes those two as done and runs the rest.
stats_subtrees() { sed -n 's/.* subtrees \([0-9]*\) .*/\1/p' "$1"; }
"$BIN" lattice "$W/c.cxt" -o "$W/l1" -t 1 --stats > "$W/l1.out" 2>&1
check '[ "$(stats_subtrees "$W/l1.out")" = 1 ] && cmp -s "$W/lref.txt" <("$BIN" info --text "$W/l1/lattice.h5" | sort)' \
      "lattice -t 1 with checkpoints: the root was not run whole ($(stats_subtrees "$W/l1.out") subtrees), or another result"
FD_TEST_KILL_AFTER=0:2:1 "$BIN" lattice "$W/c.cxt" -o "$W/l1k" -t 1 -q --checkpoint-seconds 1e-9 > /dev/null 2>&1
killed "$W/l1k" $?
d1=$(done_records "$W/l1k" 1)
total=$(python3 -c "import sys, h5py; print(len(h5py.File(sys.argv[1])['records/start']) - 1)" "$W/l1k/lattice.checkpoint/job.h5")
"$BIN" lattice "$W/c.cxt" --resume "$W/l1k" -t 1 --stats > "$W/err" 2>&1; rc=$?
check '[ $rc -eq 0 ] && cmp -s "$W/lref.txt" <("$BIN" info --text "$W/l1k/lattice.h5" | sort)' \
      "lattice -t 1: resume after a kill mid-run: exit $rc: $(cat "$W/err")"
resumed=$(attr "$W/l1k/lattice.h5" resumed_subtrees) ran=$(stats_subtrees "$W/err")
check '[ "$d1" -eq 2 ] && [ "$total" -gt 2 ] && [ "$resumed" -eq 2 ] && [ "$ran" -eq $((total - 2)) ]' \
      "lattice -t 1: $d1 of $total subtrees committed; the resumed run took $resumed as done and ran $ran"
# A lone GPU rank's host start (lattice.c, lattice_host_start), the CPU
# standing in for a device that is ready at the 20th question of the
# host's 2 threads (FD_TEST_LATE_DEVICE): the device's subtrees go to the
# threads' segment until it is due, and the list is saved when it
# commits.  Killed at its one commit (the end's), the checkpoint is that
# one segment, of stage 0, holding the whole list; the resume runs
# nothing and has the same result.
FD_TEST_LATE_DEVICE=20 FD_TEST_KILL_AFTER=0:1 "$BIN" lattice "$W/c.cxt" -o "$W/lh" -t 3 -q > /dev/null 2>&1
killed "$W/lh" $?
total=$(python3 -c "import sys, h5py; print(len(h5py.File(sys.argv[1])['records/start']) - 1)" "$W/lh/lattice.checkpoint/job.h5")
nseg=$(ls "$W/lh/lattice.checkpoint" | grep -cE '^seg-[0-9-]+\.h5$')
d0=$(done_records "$W/lh" 0)
check '[ "$nseg" = 1 ] && [ "$total" -gt 20 ] && [ "$d0" = "$total" ]' \
      "lattice host start: $nseg segments, $d0 of the $total subtrees in the split's (one segment, all of them)"
FD_TEST_LATE_DEVICE=20 "$BIN" lattice "$W/c.cxt" --resume "$W/lh" -t 3 --stats > "$W/err" 2>&1; rc=$?
check '[ $rc -eq 0 ] && [ "$(stats_subtrees "$W/err")" = 0 ] && cmp -s "$W/lref.txt" <("$BIN" info --text "$W/lh/lattice.h5" | sort)' \
      "lattice host start: resume of the one segment: exit $rc: $(cat "$W/err")"
# Checkpoints due at once: the split's segment commits before the list is
# saved, as without the host start; killed after two of the device's,
# the resume runs the rest.  Due every few milliseconds on a larger
# context: segments commit mid-run, the split's among them.
FD_TEST_LATE_DEVICE=20 FD_TEST_KILL_AFTER=0:2:1 "$BIN" lattice "$W/c.cxt" -o "$W/lhk" -t 3 -q \
  --checkpoint-seconds 1e-9 > /dev/null 2>&1
killed "$W/lhk" $?
total=$(python3 -c "import sys, h5py; print(len(h5py.File(sys.argv[1])['records/start']) - 1)" "$W/lhk/lattice.checkpoint/job.h5")
d0=$(done_records "$W/lhk" 0) d1=$(done_records "$W/lhk" 1)
FD_TEST_LATE_DEVICE=20 "$BIN" lattice "$W/c.cxt" --resume "$W/lhk" -t 3 --stats > "$W/err" 2>&1; rc=$?
check '[ $rc -eq 0 ] && [ "$d0" = 0 ] && [ "$d1" = 2 ] && [ "$(stats_subtrees "$W/err")" = $((total - 2)) ] && cmp -s "$W/lref.txt" <("$BIN" info --text "$W/lhk/lattice.h5" | sort)' \
      "lattice host start, checkpoints due at once: $d0 + $d1 of $total subtrees committed; resume exit $rc: $(cat "$W/err")"
"$BIN" gen context --objects 2000 --attributes 40 --density 0.3 --seed 6 -o "$W/c2.cxt"
"$BIN" lattice "$W/c2.cxt" -t 2 -q --text | sort > "$W/c2ref.txt"
for every in 20 100000000; do
  FD_TEST_LATE_DEVICE=$every "$BIN" lattice "$W/c2.cxt" -o "$W/lh2-$every" -t 3 -q --checkpoint-seconds 0.003
  check 'cmp -s "$W/c2ref.txt" <("$BIN" info --text "$W/lh2-$every/lattice.h5" | sort)' \
        "lattice host start (device ready at $every), checkpoints every 3 ms: another result"
done
# --text and --extents on one rank, with a segment per subtree.
"$BIN" lattice "$W/c.cxt" -o "$W/lone" --text --extents -q --checkpoint-seconds 1e-9 | sort > "$W/lone.txt"
check 'cmp -s "$W/lref.txt" "$W/lone.txt" && [ ! -e "$W/lone/lattice.checkpoint" ]' "lattice --text with checkpoints: another result"
"$BIN" lattice "$W/c.cxt" --min-support 3 --resume "$W/lref" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "no checkpoint there" "$W/err" && [ -e "$W/lref/lattice.h5" ]' \
      "lattice: resume of a finished run: exit $rc: $(cat "$W/err")"
FD_TEST_KILL_AFTER=1:2:1 mpirun -np 3 "$BIN" lattice "$W/c.cxt" -o "$W/lx" -t 1 -q --checkpoint-seconds 1e-9 \
  > /dev/null 2>&1
killed "$W/lx" $?
"$BIN" lattice "$W/c.cxt" --min-support 3 --resume "$W/lx" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "min_support=3" "$W/err"' "lattice: resume with another --min-support: exit $rc: $(cat "$W/err")"
# A forged work list (a record changed and the list's digest recomputed)
# is refused by the records' own checks, never run: each forgery would
# read or write outside the context's bitsets or the matrix.
forge() { # job.h5, record index, word index, python expression of w (the word)
  python3 - "$@" << 'EOF'
import hashlib, struct, sys, h5py, numpy as np
path, rec, word, expr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with h5py.File(path, "r+") as f:
    start = f["records/start"][:].astype(np.uint64)
    words = f["records/words"][:].astype(np.uint64)
    i = int(start[rec]) + word
    w = int(words[i])
    words[i] = np.uint64(eval(expr) & (2**64 - 1))
    f["records/words"][:] = words
    n = len(start) - 1
    h = hashlib.sha256(struct.pack("<Q", n))
    h.update(start[:n].astype("<u8").tobytes())
    h.update(struct.pack("<Q", len(words)))
    h.update(words.astype("<u8").tobytes())
    f.attrs.create("records_sha256", h.hexdigest(), dtype=h5py.string_dtype("ascii"))
EOF
}
for f in "0 0 w|0xffff" "0 1 w|0xfffff" "0 2 w+1" "0 3 w|1<<63" "0 0 w|1<<40"; do
  rm -rf "$W/lforged" && cp -r "$W/lx" "$W/lforged"
  # shellcheck disable=SC2086 # the fields are the forgery's arguments
  forge "$W/lforged/lattice.checkpoint/job.h5" $f
  "$BIN" lattice "$W/c.cxt" --resume "$W/lforged" -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "not one this run could have made" "$W/err" && [ ! -e "$W/lforged/lattice.h5" ]' \
        "lattice: resume from a forged task ($f): exit $rc: $(cat "$W/err")"
done
# The forger itself is right: an unchanged word recomputed resumes.
rm -rf "$W/lforged" && cp -r "$W/lx" "$W/lforged"
forge "$W/lforged/lattice.checkpoint/job.h5" 0 0 w
"$BIN" lattice "$W/c.cxt" --resume "$W/lforged" -q 2> "$W/err"; rc=$?
"$BIN" info --text "$W/lforged/lattice.h5" | sort > "$W/lforged.txt"
check '[ $rc -eq 0 ] && cmp -s "$W/lref.txt" "$W/lforged.txt"' "lattice: resume after a digest recomputed: exit $rc: $(cat "$W/err")"

# Single rank, checkpoints every record: the same result.
"$BIN" spearman "$W/m.npy" --pvalue 1e-3 -o "$W/one" -q --checkpoint-seconds 1e-9
check 'cmp -s <(pairs_of "$W/ref-pvalue1e31/spearman.h5") <(pairs_of "$W/one/spearman.h5") && [ ! -e "$W/one/spearman.checkpoint" ]' \
      "spearman with checkpoints on one rank: another result"

# Refusals: other parameters, no checkpoint, -o naming another directory.
FD_TEST_KILL_AFTER=1:2 mpirun -np 3 "$BIN" spearman "$W/m.npy" --pvalue 1e-3 -o "$W/sp-x" -t 1 -q \
  --checkpoint-seconds 1e-9 > /dev/null 2>&1
killed "$W/sp-x" $?
"$BIN" spearman "$W/m.npy" --pvalue 1e-4 --resume "$W/sp-x" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "value=0.0001" "$W/err" && grep -q "value=0.001" "$W/err" && [ -e "$W/sp-x/spearman.checkpoint/job.h5" ]' \
      "resume with another --pvalue: exit $rc: $(cat "$W/err")"
"$BIN" spearman "$W/m.npy" --pvalue 1e-3 --no-histogram --resume "$W/sp-x" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "histogram=0" "$W/err" && [ -e "$W/sp-x/spearman.checkpoint/job.h5" ]' \
      "resume with --no-histogram added: exit $rc: $(cat "$W/err")"
# A checkpoint of a version whose histogram bins were defined otherwise
# (its params say histogram_bins=1) is refused, not mixed in.
cp -r "$W/sp-x" "$W/sp-old"
python3 - "$W/sp-old/spearman.checkpoint/job.h5" << 'EOF'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    p = f.attrs["params"]
    p = p.decode() if isinstance(p, bytes) else p
    assert "histogram_bins=2\n" in p, p
    f.attrs.create("params", p.replace("histogram_bins=2\n", "histogram_bins=1\n"), dtype=h5py.string_dtype("ascii"))
EOF
"$BIN" spearman "$W/m.npy" --pvalue 1e-3 --resume "$W/sp-old" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "histogram_bins=2" "$W/err" && grep -q "histogram_bins=1" "$W/err"' \
      "resume of a checkpoint with other histogram bins: exit $rc: $(cat "$W/err")"
# The checkpoint names its input by the digest of the ranks: other values
# are refused; the same ranks from other bytes (every value doubled) resume
# to the uninterrupted run's result, with the new file's SHA-256.
python3 -c "
import numpy as np, sys
m = np.load(sys.argv[1])
o = m.copy(); o[5] = o[5][::-1] + 1
np.save(sys.argv[2], o)
np.save(sys.argv[3], m * 2)" "$W/m.npy" "$W/m-other.npy" "$W/m-twice.npy"
cp -r "$W/sp-x" "$W/sp-twice"
"$BIN" spearman "$W/m-other.npy" --pvalue 1e-3 --resume "$W/sp-x" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "input_ranks=" "$W/err" && [ -e "$W/sp-x/spearman.checkpoint/job.h5" ]' \
      "resume with other values: exit $rc: $(cat "$W/err")"
"$BIN" spearman "$W/m-twice.npy" --pvalue 1e-3 --resume "$W/sp-twice" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 0 ] && cmp -s <(pairs_of "$W/ref-pvalue1e31/spearman.h5") <(pairs_of "$W/sp-twice/spearman.h5") &&
       [ "$(attr "$W/sp-twice/spearman.h5" resumed_records)" -gt 0 ] &&
       [ "$(attr "$W/sp-twice/spearman.h5" input_sha256)" = "$(sha256sum "$W/m-twice.npy" | cut -c1-64)" ]' \
      "resume from the same ranks in other bytes: exit $rc: $(cat "$W/err")"
for f in "0 0 w+1000000" "0 3 1<<60" "0 2 w+1000"; do
  rm -rf "$W/sp-forged" && cp -r "$W/sp-x" "$W/sp-forged"
  # shellcheck disable=SC2086 # the fields are the forgery's arguments
  forge "$W/sp-forged/spearman.checkpoint/job.h5" $f
  "$BIN" spearman "$W/m.npy" --pvalue 1e-3 --resume "$W/sp-forged" -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "not one this run could have made" "$W/err" && [ ! -e "$W/sp-forged/spearman.h5" ]' \
        "spearman: resume from a forged record ($f): exit $rc: $(cat "$W/err")"
done
"$BIN" spearman "$W/m.npy" --pvalue 1e-3 --resume "$W/ref-pvalue1e31" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "no checkpoint there" "$W/err" && [ -e "$W/ref-pvalue1e31/spearman.h5" ]' \
      "resume of a finished run: exit $rc: $(cat "$W/err")"
"$BIN" spearman "$W/m.npy" --pvalue 1e-3 --resume "$W/sp-x" -o "$W/elsewhere" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "different directories" "$W/err"' "-o and --resume apart: exit $rc: $(cat "$W/err")"
"$BIN" spearman "$W/m.npy" --pvalue 1e-3 --resume "$W/sp-x" --checkpoint-seconds 0 -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "needs checkpoints" "$W/err"' "--resume without checkpoints: exit $rc: $(cat "$W/err")"

finish
