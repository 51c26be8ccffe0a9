# Never lose a result (docs/running.md, "Data safety"), every workload:
# - a failed run (bad input, --force over an existing result) leaves the
#   old result as it was; a run that succeeds replaces it;
# - a run deletes nothing it did not make: other workloads' results and
#   parts, the user's files (whatever their names), a symbolic link named
#   like a checkpoint and what it points to;
# - a checkpoint is bound to its run: a segment copied from another run, or
#   a job.h5 edited, is refused with a message and left where it is;
# - two runs on one directory do not both run (the lock);
# - SIGTERM commits what is finished and exits 143; --resume then gives
#   the result of a run never stopped.
source "$(dirname "$0")/lib.sh" "$@"
W=$WORK
sum() { sha256sum "$1" | cut -c1-64; }
"$BIN" gen context --objects 400 --attributes 30 --density 0.3 --seed 2 -o "$W/c.cxt"
"$BIN" gen counts --rows 300 --cols 12 --seed 2 -o "$W/m.txt"
"$BIN" gen blobs --n 400 --dims 2 --clusters 3 --seed 2 -o "$W/p.txt"
"$BIN" gen tensor --shape 10x9x8 --rank 2 --seed 2 -o "$W/t.h5"
printf 'B\n\n2\n2\na\nb\nx\ny\nX?\n.X\n' > "$W/bad.cxt"
echo "not numbers" > "$W/bad.txt"
run() { # workload input... (the workload's valid arguments)
  case $1 in
    lattice) "$BIN" lattice "${2:-$W/c.cxt}" "${@:3}" ;;
    spearman) "$BIN" spearman "${2:-$W/m.txt}" --pvalue 0.01 "${@:3}" ;;
    dpc) "$BIN" dpc "${2:-$W/p.txt}" --centers 3 "${@:3}" ;;
    bcp) "$BIN" bcp "${2:-$W/t.h5:/tensor}" --rank 3 "${@:3}" ;;
  esac
}
bad_input() { case $1 in lattice) echo "$W/bad.cxt" ;; bcp) echo "$W/bad.txt.npy" ;; *) echo "$W/bad.txt" ;; esac; }
echo junk > "$W/bad.txt.npy"

# One directory for all four workloads, each written twice.
D=$W/out
mkdir -p "$D"
echo "my notes" > "$D/notes.tmp.1"
ln -s /nonexistent "$D/user.h5"
for w in lattice spearman dpc bcp; do
  run $w "" -o "$D" -q; rc=$?
  check '[ $rc -eq 0 ] && [ -f "$D/$w.h5" ]' "$w into a shared directory: exit $rc"
done
for w in lattice spearman dpc bcp; do
  before=$(sum "$D/$w.h5")
  # Without --force an existing result is refused, and left alone.
  run $w "" -o "$D" -q 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "use --force to replace it" "$W/err" && [ "$(sum "$D/$w.h5")" = "$before" ]' \
        "$w: an existing result without --force: exit $rc: $(cat "$W/err")"
  # --force with bad input: exit 2, the old result untouched.
  run $w "$(bad_input $w)" -o "$D" -q --force 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && [ "$(sum "$D/$w.h5")" = "$before" ]' "$w --force over bad input: exit $rc, result $([ -f "$D/$w.h5" ] && echo changed || echo gone)"
  "$BIN" info "$D/$w.h5" > /dev/null; rc=$?
  check '[ $rc -eq 0 ]' "$w: the old result does not read after the failed run"
done
# Every result still reads, nothing of the user's went.
for w in lattice spearman dpc bcp; do
  "$BIN" info --text "$D/$w.h5" > /dev/null; rc=$?
  check '[ $rc -eq 0 ]' "$w: result unreadable after the other workloads ran"
done
check '[ "$(cat "$D/notes.tmp.1")" = "my notes" ] && [ -L "$D/user.h5" ]' "the user's files in the output directory were touched"
check '[ -z "$(ls -A "$D" | grep -E "\.tmp\.[0-9]+$" | grep -v "^notes.tmp.1$")" ]' "temporaries left: $(ls -A "$D")"

# Parts of one workload survive another's --force with fewer ranks.
if command -v mpirun > /dev/null; then
  P=$W/parts
  mpirun -np 3 "$BIN" lattice "$W/c.cxt" -o "$P" -q -t 1
  mpirun -np 2 "$BIN" spearman "$W/m.txt" --pvalue 0.01 -o "$P" -q -t 1
  lat=$("$BIN" info --text "$P/lattice.h5" | sort | sha256sum)
  mpirun -np 2 "$BIN" spearman "$W/m.txt" --pvalue 0.001 -o "$P" -q -t 1 --force; rc=$?
  check '[ $rc -eq 0 ] && [ "$("$BIN" info --text "$P/lattice.h5" | sort | sha256sum)" = "$lat" ]' \
        "spearman --force broke the lattice's parts: exit $rc, $(ls "$P" | tr '\n' ' ')"
  check '[ "$(ls "$P" | grep -c "^spearman\..*\.part-")" = 2 ] && [ "$(ls "$P" | grep -c "^lattice\..*\.part-")" = 3 ]' \
        "parts after the replacement: $(ls "$P" | tr '\n' ' ')"
  # A failing --force with more ranks keeps the old parts and the master.
  mpirun -np 3 "$BIN" spearman "$W/bad.txt" --pvalue 0.01 -o "$P" -q -t 1 --force 2> /dev/null
  "$BIN" info --text "$P/spearman.h5" > /dev/null; rc=$?
  check '[ $rc -eq 0 ] && [ "$(ls "$P" | grep -c "^spearman\..*\.part-")" = 2 ]' "a failed spearman --force changed the old parts"
  # A master edited to read /pairs/i from another file (a FIFO here, which
  # HDF5 would block opening): refused before any read.
  cp -r "$P" "$W/redirect"
  mkfifo "$W/redirect/evil.h5"
  python3 - "$W/redirect/spearman.h5" << 'EOF'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    n = f["pairs/i"].shape[0]
    del f["pairs/i"]
    layout = h5py.VirtualLayout(shape=(n,), dtype="<u8")
    layout[:] = h5py.VirtualSource("evil.h5", "pairs/i", shape=(n,))
    f["pairs"].create_virtual_dataset("i", layout)
EOF
  timeout 30 "$BIN" info --text "$W/redirect/spearman.h5" > /dev/null 2> "$W/err"; rc=$?
  check '[ $rc -eq 2 ] && grep -q "not one of its parts" "$W/err"' "a master reading from another file: exit $rc: $(cat "$W/err")"
fi

# A symbolic link where a checkpoint would go: refused, never followed.
mkdir -p "$W/victim" "$W/sl"
echo precious > "$W/victim/job.h5"
ln -s "$W/victim" "$W/sl/lattice.checkpoint"
"$BIN" lattice "$W/c.cxt" -o "$W/sl" -q --force 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && [ "$(cat "$W/victim/job.h5")" = precious ]' "a linked lattice.checkpoint: exit $rc: $(cat "$W/err")"
"$BIN" lattice "$W/c.cxt" --resume "$W/sl" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "not a directory" "$W/err" && [ "$(cat "$W/victim/job.h5")" = precious ]' \
      "--resume through a linked checkpoint: exit $rc: $(cat "$W/err")"

# Checkpoints bound to their run.  Two killed runs of the same command.
"$BIN" gen counts --rows 1500 --cols 12 --groups 20 --seed 5 -o "$W/m2.npy"
# (In a subshell that waits for the run itself, "|| true", so that the
# shell's "Killed" line goes to its stderr, not the test's log.)
for k in a b; do
  (FD_TEST_KILL_AFTER=0:3 "$BIN" spearman "$W/m2.npy" --pvalue 1e-3 -o "$W/k$k" -t 2 -q --checkpoint-seconds 1e-9 || true) \
    > /dev/null 2>&1
  check '[ -f "$W/k$k/spearman.checkpoint/job.h5" ] && [ ! -e "$W/k$k/spearman.h5" ]' \
        "killed run k$k left $(ls -A "$W/k$k" 2> /dev/null | tr '\n' ' ')"
done
"$BIN" spearman "$W/m2.npy" --pvalue 1e-3 -o "$W/kref" -t 2 -q --checkpoint-seconds 0
# A committed segment of checkpoint directory $1, never a temporary that a
# killed run left (seg-...h5.tmp.PID sorts first when its number is lower).
committed_seg() { ls "$1" | grep -E "^seg-[0-9-]+\.h5$" | head -1; }
seg=$(committed_seg "$W/kb/spearman.checkpoint")
check '[ -n "$seg" ]' "run kb committed no segment: $(ls "$W/kb/spearman.checkpoint" | tr '\n' ' ')"
cp -r "$W/ka" "$W/kforeign"
cp "$W/kb/spearman.checkpoint/$seg" "$W/kforeign/spearman.checkpoint/seg-0000-00000-099999.h5"
"$BIN" spearman "$W/m2.npy" --pvalue 1e-3 --resume "$W/kforeign" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "a segment of another run" "$W/err" && [ -f "$W/kforeign/spearman.checkpoint/seg-0000-00000-099999.h5" ]' \
      "a segment of another run: exit $rc: $(cat "$W/err")"
# An edited job.h5 (its parameters changed, and the command with them).
cp -r "$W/ka" "$W/kedit"
python3 - "$W/kedit/spearman.checkpoint/job.h5" << 'EOF'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    p = f.attrs["params"]
    p = p.decode() if isinstance(p, bytes) else p
    f.attrs["params"] = p.replace("value=0.001", "value=0.01")
EOF
"$BIN" spearman "$W/m2.npy" --pvalue 1e-2 --resume "$W/kedit" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "run key does not match" "$W/err"' "an edited job.h5: exit $rc: $(cat "$W/err")"
# A damaged segment: refused, not dropped.
cp -r "$W/ka" "$W/kdamaged"
s=$(committed_seg "$W/kdamaged/spearman.checkpoint")
check '[ -n "$s" ]' "run ka committed no segment: $(ls "$W/ka/spearman.checkpoint" | tr '\n' ' ')"
head -c 300 "$W/ka/spearman.checkpoint/$s" > "$W/kdamaged/spearman.checkpoint/$s"
"$BIN" spearman "$W/m2.npy" --pvalue 1e-3 --resume "$W/kdamaged" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "not a whole checkpoint segment" "$W/err" && [ -f "$W/kdamaged/spearman.checkpoint/$s" ]' \
      "a damaged segment: exit $rc: $(cat "$W/err")"
# The user's file in the checkpoint directory, with .tmp. in its name,
# survives a resume; the resume gives the uninterrupted result.
echo mine > "$W/ka/spearman.checkpoint/my.tmp.notes"
echo mine > "$W/ka/my.h5.tmp.notes"
"$BIN" spearman "$W/m2.npy" --pvalue 1e-3 --resume "$W/ka" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 0 ] && [ "$(cat "$W/ka/spearman.checkpoint/my.tmp.notes")" = mine ] && [ "$(cat "$W/ka/my.h5.tmp.notes")" = mine ]' \
      "resume removed the user's files or failed: exit $rc: $(cat "$W/err")"
check 'cmp -s <("$BIN" info --text "$W/ka/spearman.h5" | sort) <("$BIN" info --text "$W/kref/spearman.h5" | sort)' \
      "the resumed result differs from an uninterrupted run's"
# A fresh run beside a checkpoint is refused (it holds a run's work).
"$BIN" spearman "$W/m2.npy" --pvalue 1e-3 -o "$W/kb" -q --force 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "holds the work of an interrupted run" "$W/err" && [ -f "$W/kb/spearman.checkpoint/job.h5" ]' \
      "a fresh run over a checkpoint: exit $rc: $(cat "$W/err")"

# Two runs at once on one directory: while one holds the directory's lock
# (a POSIX lock, taken here by Python as another run would), a run is
# refused and writes nothing; once it is free, a run goes ahead and leaves
# no lock file.
mkdir -p "$W/busy"
python3 -c "
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.write(fd, b'pid 4242 on elsewhere\n')
open(sys.argv[2], 'w').close()
time.sleep(60)" "$W/busy/.fcbo-dist.lock" "$W/busy.held" &
holder=$!
for _ in $(seq 100); do [ -e "$W/busy.held" ] && break; sleep 0.05; done
"$BIN" lattice "$W/c.cxt" -o "$W/busy" -q 2> "$W/err"; rc=$?
check '[ $rc -eq 2 ] && grep -q "in use by another fcbo-dist run (pid 4242 on elsewhere)" "$W/err" && [ ! -e "$W/busy/lattice.h5" ]' \
      "a run on a locked directory: exit $rc: $(cat "$W/err")"
kill $holder; wait $holder 2> /dev/null
"$BIN" lattice "$W/c.cxt" -o "$W/busy" -q; rc=$?
check '[ $rc -eq 0 ] && [ -f "$W/busy/lattice.h5" ] && [ ! -e "$W/busy/.fcbo-dist.lock" ]' \
      "a run once the lock was free: exit $rc, $(ls -A "$W/busy")"

# SIGTERM (SLURM's warning): the run commits what it finished, exits 143,
# leaves no result; --resume finishes with the uninterrupted result.  The
# run is stopped (SIGSTOP) as soon as it committed a segment, sent SIGTERM,
# and let go, so that it cannot finish in between on a loaded machine.
"$BIN" gen context --objects 3000 --attributes 44 --density 0.3 --seed 8 -o "$W/slow.dat"
"$BIN" lattice "$W/slow.dat" -o "$W/lref" -q -t 2 --checkpoint-seconds 0
# sigterm_resume NAME THREADS READY [ARGS]: the run into $W/NAME, stopped
# once READY (a test) holds; then --resume, which must give lref's
# concepts.  Two threads: after a segment is committed.  One thread, whose
# root runs whole until a checkpoint is due (300 s away): mid-tree, and
# what it has not visited becomes the checkpoint's list.
sigterm_resume() {
  local name=$1 t=$2 ready=$3 pid rc; shift 3
  FD_PROGRESS_INTERVAL=0.1 "$BIN" lattice "$W/slow.dat" -o "$W/$name" -t "$t" "$@" 2> "$W/$name.err" &
  pid=$!
  for _ in $(seq 500); do eval "$ready" && break; sleep 0.01; done
  kill -STOP $pid; kill -TERM $pid; kill -CONT $pid
  wait $pid; rc=$?
  check '[ $rc -eq 143 ] && [ ! -e "$W/$name/lattice.h5" ] && [ -f "$W/$name/lattice.checkpoint/job.h5" ]' \
        "SIGTERM, $t threads: exit $rc, left $(ls -A "$W/$name" 2> /dev/null | tr '\n' ' ')"
  "$BIN" lattice "$W/slow.dat" --resume "$W/$name" -q -t "$t" 2> "$W/err"; rc=$?
  check '[ $rc -eq 0 ] && cmp -s <("$BIN" info --text "$W/$name/lattice.h5" | sort) <("$BIN" info --text "$W/lref/lattice.h5" | sort)' \
        "resume after SIGTERM, $t threads: exit $rc: $(cat "$W/err")"
}
sigterm_resume term 2 '[ -n "$(ls "$W/term/lattice.checkpoint" 2> /dev/null | grep "^seg-.*h5$")" ]' --checkpoint-seconds 0.2
sigterm_resume term1 1 'grep -q concepts "$W/term1.err"'
# SIGTERM while --edges finds the covers (up by rows: over a minute of
# work on 2 cores here, after a second of enumeration): the run stops
# within seconds, exits 143 and keeps its checkpoint for --resume, no
# result.
FD_EDGES_PASS=rows FD_PROGRESS_INTERVAL=0.2 "$BIN" lattice "$W/slow.dat" -o "$W/eterm" -t 2 --edges --checkpoint-seconds 0.2 2> "$W/eterm.err" &
pid=$!
for _ in $(seq 600); do grep -q "concepts' covers" "$W/eterm.err" && break; sleep 0.05; done
t0=$(date +%s)
kill -STOP $pid; kill -TERM $pid; kill -CONT $pid
wait $pid; rc=$?
took=$(( $(date +%s) - t0 ))
check '[ $rc -eq 143 ] && [ $took -le 15 ] && [ ! -e "$W/eterm/lattice.h5" ] && [ -f "$W/eterm/lattice.checkpoint/job.h5" ]' \
      "SIGTERM during --edges: exit $rc after $took s, left $(ls -A "$W/eterm" 2> /dev/null | tr '\n' ' '): $(tail -2 "$W/eterm.err")"
# A workload without checkpoints stops too: SIGINT, exit 130, the old
# result kept.
"$BIN" gen tensor --shape 40x40x40 --rank 3 --seed 1 -o "$W/big.npy"
"$BIN" bcp "$W/big.npy" --rank 3 -o "$W/bt" -q --max-iter 2
before=$(sum "$W/bt/bcp.h5")
# Signalled once its fit is under way (its first progress line: the
# handler is in place, so the stop is ours, not SIGINT's default action,
# which would also end in 130), and stopped within seconds.
FD_PROGRESS_INTERVAL=0.1 "$BIN" bcp "$W/big.npy" --rank 8 --starts 1000 -o "$W/bt" --force > /dev/null 2> "$W/bt.err" &
pid=$!
for _ in $(seq 600); do grep -q "^progress:" "$W/bt.err" && break; sleep 0.05; done
t0=$(date +%s)
kill -INT $pid
wait $pid; rc=$?
took=$(( $(date +%s) - t0 ))
check '[ $rc -eq 130 ] && [ $took -le 15 ] && grep -q "stopping at the next record boundary" "$W/bt.err" && [ "$(sum "$W/bt/bcp.h5")" = "$before" ] && [ -z "$(ls -A "$W/bt" | grep tmp)" ]' \
      "bcp stopped by SIGINT: exit $rc after $took s, $(ls -A "$W/bt" | tr '\n' ' '): $(tail -3 "$W/bt.err")"

# Results edited or damaged are refused by every reader (exit 2).
cp -r "$D" "$W/edited"
python3 - "$W/edited" << 'EOF'
import sys, h5py
d = sys.argv[1]
with h5py.File(d + "/bcp.h5", "r+") as f:
    f.attrs["rank"] = f.attrs["rank"] + 7
with h5py.File(d + "/lattice.h5", "r+") as f:
    f.attrs["n_concepts"] = f.attrs["n_concepts"] + 1
with h5py.File(d + "/dpc.h5", "r+") as f:
    f.attrs["n_points"] = f.attrs["n_points"] * 2
with h5py.File(d + "/spearman.h5", "r+") as f:
    del f.attrs["complete"]
EOF
for w in lattice spearman dpc bcp; do
  for t in "" --text; do
    "$BIN" info $t "$W/edited/$w.h5" > /dev/null 2> "$W/err"; rc=$?
    check '[ $rc -eq 2 ] && grep -q "fcbo-dist: error: .*$w.h5" "$W/err"' "info $t of an edited $w.h5: exit $rc: $(cat "$W/err")"
  done
done
# bcp --fuse records the whole tensor's sizes, and info --text reads it.
"$BIN" gen tensor --shape 16x12x10 --rank 2 --seed 3 -o "$W/s.h5"
"$BIN" bcp "$W/s.h5:/tensor" --rank 2 --fuse 2x1x1 -o "$W/sf" -q
"$BIN" info --text "$W/sf/bcp.h5" > "$W/sf.txt"; rc=$?
check '[ $rc -eq 0 ] && [ "$(grep -c "^1 " "$W/sf.txt")" = 16 ] && [ "$(grep -c "^3 " "$W/sf.txt")" = 10 ]' \
      "bcp --fuse: info --text exit $rc, $(grep -c "^1 " "$W/sf.txt") rows of mode 1"
finish
