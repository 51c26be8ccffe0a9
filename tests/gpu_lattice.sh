# The CUDA lattice backend against the CPU backend: the same concepts
# (support, intent, extent) on random contexts of several shapes and
# densities (one to 18 intent words, so both register groups of the
# closure kernel run), on contexts with empty and full rows, with and
# without a minimum support, on one GPU and, where the machine has two, on
# two ranks; and on the shared mushroom and chess data.  Extents are
# lists or bitsets and bitsets are closed by rows or by columns: the
# default mix runs everywhere, and each way alone (every extent a bitset,
# closed by rows only, by columns only; no bitsets at all) on part of the
# shapes.  One GPU with checkpoints hands its stack back as the work list
# and resumes from it.  Needs a GPU: CI
# only builds the backend (ctest -L gpu on the GPU machine runs this).
source "$(dirname "$0")/lib.sh" "$@"
# These runs check the GPU's own paths: on their small inputs the host's
# threads, which begin while the GPU starts (FD_GPU_HOST_START), would
# finish the search first.  The cases of the host start set it on.
export FD_GPU_HOST_START=off
HERE=$(dirname "$0")
# FD_TEST_GPU_BACKEND=cpu dry-runs the script itself on a machine without a GPU.
"$BIN" gen context --objects 20 --attributes 8 --density 0.3 -o "$WORK/probe.cxt"
gpu_probe "$BIN" lattice "$WORK/probe.cxt"
: > "$WORK/cmp"

# same LABEL FILE [lattice options]: CPU and GPU results are the same set.
# GPU_ENV: settings of the GPU runs (docs/performance.md, tuning knobs).
GPU_ENV=""
same() {
  local label="$1${GPU_ENV:+ ($GPU_ENV)}" f=$2; shift 2
  "$BIN" lattice "$f" --backend cpu --extents -o "$WORK/cpu" --force -q "$@"
  if env $GPU_ENV "$BIN" lattice "$f" --backend "$GB" --extents -o "$WORK/gpu" --force -q "$@" 2> "$WORK/err"; then
    check 'python3 "$HERE/same_lattice.py" "$WORK/cpu/lattice.h5" "$WORK/gpu/lattice.h5" > "$WORK/cmp" 2>&1' \
          "$label $*: 1 GPU differs from the CPU: $(cat "$WORK/cmp")"
  else
    bad "$label $*: cuda backend failed: $(cat "$WORK/err")"
  fi
  if [ "${GPUS:-0}" -ge 2 ]; then
    # mpirun reads standard input: keep it off the here-strings that feed the loops.
    if env $GPU_ENV mpirun -np 2 "$BIN" lattice "$f" --backend "$GB" --extents -o "$WORK/gpu2" --force -q "$@" \
         2> "$WORK/err" < /dev/null; then
      check 'python3 "$HERE/same_lattice.py" "$WORK/cpu/lattice.h5" "$WORK/gpu2/lattice.h5" > "$WORK/cmp" 2>&1' \
            "$label $*: 2 GPUs differ from the CPU: $(cat "$WORK/cmp")"
    else
      bad "$label $*: cuda backend on 2 ranks failed: $(cat "$WORK/err")"
    fi
  fi
}

#      objects attributes density seed  extra
cases="1      1    0.5   1 -
       30     5    0.5   2 -
       200    20   0.3   3 -
       1000   64   0.15  4 -
       2000   65   0.1   5 -
       3000   130  0.05  6 -
       500    300  0.04  7 -
       300    1100 0.015 8 -
       4000   200  0.08  9 zipf
       50     16   0.8   10 -"
while read -r n m d s extra; do
  f="$WORK/r$s.dat"
  z=(); [ "$extra" = zipf ] && z=(--zipf 1.0)
  "$BIN" gen context --objects "$n" --attributes "$m" --density "$d" --seed "$s" "${z[@]}" -o "$f"
  same "random $n x $m d=$d" "$f"
  same "random $n x $m d=$d" "$f" --min-support 3
done <<< "$cases"

# Empty rows, a full row, an attribute nobody has, one everybody has.
printf '1 2 3\n\n1 2 3 4 5 6\n2 3\n\n1 3 5\n2 6\n' > "$WORK/edges.dat"
same "empty and full rows" "$WORK/edges.dat"
same "empty and full rows" "$WORK/edges.dat" --min-support 2
"$BIN" gen context --objects 800 --attributes 90 --density 0.2 --seed 11 -o "$WORK/pct.dat"
same "random 800 x 90" "$WORK/pct.dat" --min-support 5%

# Each extent layout and closure alone.
for GPU_ENV in "FD_GPU_BITS_MIN=1 FD_GPU_CLOSURE=rows" "FD_GPU_BITS_MIN=1 FD_GPU_CLOSURE=columns" \
               "FD_GPU_BITS_MIN=64 FD_GPU_CLOSURE=columns" "FD_GPU_BITS_MIN=off"; do
  for s in 2 3 4 5 8 10; do
    same "random seed $s" "$WORK/r$s.dat"
    same "random seed $s" "$WORK/r$s.dat" --min-support 3
  done
  same "empty and full rows" "$WORK/edges.dat"
done
GPU_ENV=""

# The settings above do what they say: closures by columns only where
# bitset extents are allowed and columns asked for (FD_GPU_VERBOSE counts them).
by_columns() {
  env "$@" FD_GPU_VERBOSE=1 "$BIN" lattice "$WORK/r10.dat" --backend "$GB" -q 2>&1 > /dev/null |
    sed -n 's/.* closures, \([0-9]*\) by columns.*/\1/p'
}
if [ "$GB" = cuda ]; then
  n=$(by_columns FD_GPU_BITS_MIN=1 FD_GPU_CLOSURE=columns); check '[ "${n:-0}" -gt 0 ]' "no closure by columns when asked for ($n)"
  n=$(by_columns FD_GPU_BITS_MIN=off FD_GPU_CLOSURE=columns); check '[ "$n" = 0 ]' "closures by columns without bitset extents ($n)"
  n=$(by_columns FD_GPU_BITS_MIN=1 FD_GPU_CLOSURE=rows); check '[ "$n" = 0 ]' "closures by columns when rows were asked for ($n)"
  FD_GPU_CLOSURE=diagonal "$BIN" lattice "$WORK/r10.dat" --backend cuda -q > /dev/null 2> "$WORK/err"
  rc=$?
  check '[ $rc = 2 ] && grep -q "FD_GPU_CLOSURE=diagonal: expected rows, columns or auto" "$WORK/err"' \
        "FD_GPU_CLOSURE=diagonal: exit $rc, $(cat "$WORK/err")"
  for v in abc 0 12x; do
    FD_GPU_BITS_MIN=$v "$BIN" lattice "$WORK/r10.dat" --backend cuda -q > /dev/null 2> "$WORK/err"
    rc=$?
    check '[ $rc = 2 ] && grep -q "FD_GPU_BITS_MIN=$v: expected a number of objects (or off)" "$WORK/err"' \
          "FD_GPU_BITS_MIN=$v: exit $rc, $(cat "$WORK/err")"
  done
  # The other numeric knobs of the GPU lattice are refused the same way.
  for kv in FD_GPU_CHUNK=0 FD_GPU_CHUNK=-3 FD_GPU_REFILL=x FD_DEVICE_TASKS=0; do
    env "$kv" "$BIN" lattice "$WORK/r10.dat" --backend cuda -q > /dev/null 2> "$WORK/err"
    rc=$?
    check '[ $rc = 2 ] && grep -q "$kv: expected a number of" "$WORK/err"' "$kv: exit $rc, $(cat "$WORK/err")"
  done
fi

D=$SHARED/data/fca
if [ -e "$D/mushroom.dat" ]; then
  same mushroom "$D/mushroom.dat"
  same mushroom "$D/mushroom.dat" --min-support 500
else
  echo "note: $D/mushroom.dat is absent, skipped"
fi
if [ -e "$D/chess.dat" ]; then
  same chess "$D/chess.dat" --min-support 2200
else
  echo "note: $D/chess.dat is absent, skipped"
fi
# One GPU rank with checkpoints (-o) runs the root whole, with no split of
# the tree first (one subtree).  With a checkpoint due at once, it hands
# the stack left after its first step back as the work list; killed after
# two segments of those subtrees, the resumed run takes them as done, runs
# the rest, and the result is the CPU's.  (-t 1: the dry run on the CPU takes
# the same path.)
subtrees() { sed -n 's/.* subtrees \([0-9]*\) .*/\1/p' "$1"; }
h5attr() { python3 -c "import sys, h5py; print(h5py.File(sys.argv[1]).attrs[sys.argv[2]])" "$1" "$2"; }
f=$WORK/r6.dat
"$BIN" lattice "$f" --backend cpu -o "$WORK/pref" --force -q
"$BIN" lattice "$f" --backend "$GB" -t 1 -o "$WORK/p1" --force --stats > "$WORK/p1.out" 2>&1
check '[ "$(subtrees "$WORK/p1.out")" = 1 ] && same_set <("$BIN" info --text "$WORK/p1/lattice.h5") <("$BIN" info --text "$WORK/pref/lattice.h5")' \
      "one GPU with checkpoints: the root was not run whole ($(subtrees "$WORK/p1.out") subtrees), or another result"
rm -rf "$WORK/pk"
FD_TEST_KILL_AFTER=0:2:1 "$BIN" lattice "$f" --backend "$GB" -t 1 -o "$WORK/pk" -q --checkpoint-seconds 1e-9 > /dev/null 2>&1
rc=$?
check '[ $rc -ne 0 ] && [ ! -e "$WORK/pk/lattice.h5" ] && [ -e "$WORK/pk/lattice.checkpoint/job.h5" ]' "one GPU killed: exit $rc"
wait_lock_free "$WORK/pk"
total=$(python3 -c "import sys, h5py; print(len(h5py.File(sys.argv[1])['records/start']) - 1)" "$WORK/pk/lattice.checkpoint/job.h5")
"$BIN" lattice "$f" --backend "$GB" -t 1 --resume "$WORK/pk" --stats > "$WORK/err" 2>&1; rc=$?
check '[ $rc -eq 0 ] && same_set <("$BIN" info --text "$WORK/pk/lattice.h5") <("$BIN" info --text "$WORK/pref/lattice.h5")' \
      "one GPU: resume after a kill: exit $rc: $(cat "$WORK/err")"
resumed=$(h5attr "$WORK/pk/lattice.h5" resumed_subtrees) ran=$(subtrees "$WORK/err")
# (A GPU commits the few subtrees it took at a time: two segments hold two
# or more.)
check '[ "$resumed" -ge 2 ] && [ "$total" -gt "$resumed" ] && [ "$ran" -eq $((total - resumed)) ]' \
      "one GPU: a list of $total subtrees; the resumed run took $resumed as done and ran $ran"

# The context ends on a thread as soon as the enumeration is done with the
# GPU (FD_GPU_RELEASE=early, the default), not with --edges (whose pass may
# use the GPU after it) nor with FD_GPU_RELEASE=exit.
if [ "$GB" = cuda ]; then
  released() { env "$@" FD_GPU_VERBOSE=1 "$BIN" lattice "$WORK/r6.dat" --backend cuda -o "$WORK/rel" --force -q 2>&1 |
                 grep -c "the device released"; }
  check '[ "$(released)" = 1 ] && [ "$(released FD_GPU_RELEASE=exit)" = 0 ] && [ -s "$WORK/rel/lattice.h5" ]' \
        "the GPU's early release: $(released) with the default, $(released FD_GPU_RELEASE=exit) with exit"
  FD_GPU_VERBOSE=1 "$BIN" lattice "$WORK/r6.dat" --backend cuda -o "$WORK/rel" --force --edges -q 2> "$WORK/err"
  check '[ $? = 0 ] && ! grep -q "the device released" "$WORK/err"' "--edges: the GPU released before the covers"
fi

# --backend auto: a small input runs on the CPU (the GPU's start-up would
# cost more than the whole run) and says so; a large one (2 MB) on the GPU
# with one thread, on the CPU with eight (below 768 KiB a thread);
# --backend cuda runs even the small one there.
if [ "$GB" = cuda ]; then
  "$BIN" gen context --objects 300 --attributes 20 --density 0.3 --seed 4 -o "$WORK/small.dat" > /dev/null
  "$BIN" gen context --objects 60000 --attributes 200 --density 0.05 --seed 4 -o "$WORK/large.dat" > /dev/null
  "$BIN" lattice "$WORK/small.dat" --backend auto --stats 2> "$WORK/auto.err" > /dev/null
  check 'grep -q "backend cpu: auto" "$WORK/auto.err" && grep -q "backend cpu, " "$WORK/auto.err"' "auto on a small input: $(head -2 "$WORK/auto.err")"
  "$BIN" lattice "$WORK/small.dat" --backend cuda --stats 2> "$WORK/auto.err" > /dev/null
  check 'grep -q "backend cuda" "$WORK/auto.err" && ! grep -q "backend cpu: auto" "$WORK/auto.err"' "cuda on a small input: $(head -2 "$WORK/auto.err")"
  "$BIN" lattice "$WORK/large.dat" --backend auto --min-support 2% -t 1 --stats 2> "$WORK/auto.err" > /dev/null
  check 'grep -q "backend cuda" "$WORK/auto.err"' "auto on a large input, one thread: $(head -2 "$WORK/auto.err")"
  "$BIN" lattice "$WORK/large.dat" --backend auto --min-support 2% -t 8 --stats 2> "$WORK/auto.err" > /dev/null
  check 'grep -q "for each of the job.s 8 threads" "$WORK/auto.err" && grep -q "backend cpu, 8 threads" "$WORK/auto.err"' \
        "auto on a large input, eight threads: $(head -2 "$WORK/auto.err")"
  # One GPU rank with threads to spare: all but one run the top of the tree
  # while the GPU starts (0.2 s), and the GPU takes what they leave
  # (FD_GPU_HOST_START=on, the default; off: they wait).  With -o
  # (checkpoints: the threads' frontier is the list) and with --text; the
  # result is the CPU's either way.
  "$BIN" lattice "$WORK/large.dat" --backend cpu --min-support 2% -o "$WORK/hcpu" --force -q
  "$BIN" info --text "$WORK/hcpu/lattice.h5" > "$WORK/hcpu.txt"
  for hs in on off; do
    FD_GPU_HOST_START=$hs "$BIN" lattice "$WORK/large.dat" --backend cuda --min-support 2% -t 8 -o "$WORK/hgpu" \
      --force --stats 2> "$WORK/hs.err" > /dev/null
    rc=$?
    ran=$(grep -c "the host's 7 threads ran" "$WORK/hs.err")
    check '[ $rc = 0 ] && [ "$ran" = "$([ $hs = on ] && echo 1 || echo 0)" ] && same_set "$WORK/hcpu.txt" <("$BIN" info --text "$WORK/hgpu/lattice.h5")' \
          "FD_GPU_HOST_START=$hs -o: exit $rc, the host's line $ran times, or another result: $(grep -E "host|error" "$WORK/hs.err")"
    FD_GPU_HOST_START=$hs "$BIN" lattice "$WORK/large.dat" --backend cuda --min-support 2% -t 8 --text > "$WORK/hs.txt"
    check '[ $? = 0 ] && same_set "$WORK/hcpu.txt" "$WORK/hs.txt"' "FD_GPU_HOST_START=$hs --text: another result"
  done
  # Threads that finish first (a few thousand concepts, against the
  # driver's tens of milliseconds at least): the GPU is never opened, the
  # command does not wait for its start, and the result is the CPU's.
  "$BIN" lattice "$WORK/small.dat" --backend cpu -o "$WORK/scpu" --force -q
  FD_GPU_HOST_START=on "$BIN" lattice "$WORK/small.dat" --backend cuda -t 8 -o "$WORK/sgpu" --force --stats 2> "$WORK/hs.err" > /dev/null
  rc=$?
  check '[ $rc = 0 ] && grep -q "the GPU was not needed" "$WORK/hs.err" && same_set <("$BIN" info --text "$WORK/scpu/lattice.h5") <("$BIN" info --text "$WORK/sgpu/lattice.h5")' \
        "threads first, the GPU unopened: exit $rc, $(grep -E "host|error" "$WORK/hs.err")"
fi
finish
