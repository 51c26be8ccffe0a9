# Shared by the shell tests: arguments, a scratch directory, assertions.
# Usage in a test: source "$(dirname "$0")/lib.sh" "$@"
set -u
BIN=$1; ORACLE=$2; SHARED=$3; WORK=$4
rm -rf "$WORK"; mkdir -p "$WORK"
# The CPU backend unless a test names another: on a GPU machine "auto"
# would pick the GPU, and these tests check the CPU path (search counters,
# more ranks than GPUs).
export FD_BACKEND=cpu
# The input hash's cache (large inputs only) in the test's scratch, never
# in the user's home.
export FD_HASH_CACHE_DIR=$WORK/hash-cache
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Each test's mpirun sessions in a directory of its own: under ctest -j,
# one test's mpirun removing the shared session directory while another
# made its own failed the latter ("A call to mkdir was unable to create
# the desired directory", mpi_lattice, 2026-12-05).  Short, under /tmp:
# the session holds Unix sockets, whose paths are limited to 108 bytes.
OMPI_MCA_orte_tmpdir_base=$(mktemp -d /tmp/fd-ompi.XXXXXX) && export OMPI_MCA_orte_tmpdir_base
trap 'rm -rf "$OMPI_MCA_orte_tmpdir_base"' EXIT
PASS=0; FAIL=0
ok()   { PASS=$((PASS + 1)); }
bad()  { FAIL=$((FAIL + 1)); echo "FAIL: $*" >&2; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }
# Same lines, in any order.
same_set() { cmp -s <(sort "$1") <(sort "$2"); }
need_shared() {
  if [ ! -e "$SHARED/data/fca/$1" ]; then echo "skipped: $SHARED/data/fca/$1 is absent"; exit 77; fi
}
finish() { echo "$PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]; }
# After mpirun returns from a run it killed, the other ranks may still be
# exiting (slowly under the sanitizers), the one that holds DIR's lock
# among them: wait (up to 60 s) until the pid the lock names is gone.
wait_lock_free() {
  local pid
  pid=$(sed -n 's/^pid \([0-9]*\) on .*/\1/p' "$1/.fcbo-dist.lock" 2> /dev/null)
  [ -n "$pid" ] || return 0
  for _ in $(seq 600); do kill -0 "$pid" 2> /dev/null || return 0; sleep 0.1; done
}
# The GPU tests' first step: GB (FD_TEST_GPU_BACKEND, default cuda) and
# GPUS; then the probe command, which skips the test (77) where the
# backend cannot run here and is a failure for any other error.
gpu_probe() {
  GB=${FD_TEST_GPU_BACKEND:-cuda}
  GPUS=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
  if ! "$@" --backend "$GB" -q > /dev/null 2> "$WORK/probe.err"; then
    if grep -q "cannot run here\|not available" "$WORK/probe.err"; then echo "skipped: $(cat "$WORK/probe.err")"; exit 77; fi
    bad "probe: $(cat "$WORK/probe.err")"
  fi
}
# The files of a partitioned result of workload $2 in $1, with the run id
# replaced by RUNID ("lattice.h5 lattice.RUNID.part-00000.h5 ..."), and
# checks that every part names the same run.
files_of() {
  ls "$1" | sed -E "s/^$2\.[0-9a-f]{16}\.part-/$2.RUNID.part-/" | LC_ALL=C sort | tr '\n' ' '
  [ "$(ls "$1" | grep -E "^$2\.[0-9a-f]{16}\.part-" | cut -d. -f2 | sort -u | wc -l)" -le 1 ] || echo "(several run ids)"
}
# What files_of says of a result of workload $1 over $2 parts.
want_parts() {
  { echo "$1.h5"; for r in $(seq 0 $(($2 - 1))); do printf "$1.RUNID.part-%05d.h5\n" $r; done; shift 2
    for f in "$@"; do echo "$f"; done; } | LC_ALL=C sort | tr '\n' ' '
}
# The path of part $3 of the result of workload $2 in $1.
part_of() { ls "$1"/"$2".*.part-$(printf %05d "$3").h5; }
