#!/usr/bin/env bash
# The write of dpc.h5's arrays for N points (bench/h5_write.c, built here
# against build/'s libraries), --reps times each, alternating: chunks
# checksummed on the threads and written directly (FD_H5_DIRECT=on, the
# default), by HDF5's own filter (FD_H5_DIRECT=off), and without
# checksums (FD_H5_CHECKSUM=off: the floor).  Prints one line per run,
# after one thread's Fletcher-32 speed (h5_write --sum).  With --replace,
# each run instead writes the file as a result is written and renames it
# over the last run's, alternating FD_WRITEBACK=on (the default: the
# file's writeback started while it is written, src/common/writeback.c)
# and off (ext4 starts it inside the rename); it prints the whole and the
# commit (the rename).
#
#   bench/h5-write.sh [--n 10000000] [--threads 2] [--reps 4] [--dir /tmp] [--replace]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
N=10000000; THREADS=$(nproc); REPS=4; DIR=${TMPDIR:-/tmp}
REPLACE=""
bench_options 2,13 "--n=N --threads=THREADS --reps=REPS --dir=DIR --replace=REPLACE!1" "$@"
b=$here/../build
tmp=$(mktemp -d "$DIR/fcbo-h5w.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
hdf5_inc=$(pkg-config --cflags hdf5 2> /dev/null || echo -I/usr/include/hdf5/serial)
hdf5_lib=$(pkg-config --libs hdf5 2> /dev/null || echo "-L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5")
gcc -O2 -I"$here/../src" $hdf5_inc "$here/h5_write.c" "$b/libfcbo_io.a" "$b/libfcbo_common.a" "$b/libfcbo_status.a" \
  $hdf5_lib -lpthread -lm -o "$tmp/h5_write" || { echo "bench/h5-write.sh: cannot build the harness" >&2; exit 2; }
echo "# $(date +%F) $(hostname), $(nproc) cores, $N points, $THREADS threads, commit $(git -C "$here/.." rev-parse --short HEAD)"
if [ -n "$REPLACE" ]; then
  echo "# --replace: $(findmnt -n -o FSTYPE,OPTIONS -T "$tmp" 2> /dev/null)"
  "$tmp/h5_write" "$tmp/f.h5" "$N" "$THREADS" --replace > /dev/null || exit 1
  for _ in $(seq "$REPS"); do
    for m in on off; do
      echo "FD_WRITEBACK=$m $(FD_WRITEBACK=$m "$tmp/h5_write" "$tmp/f.h5" "$N" "$THREADS" --replace) s"
    done
  done
  exit 0
fi
"$tmp/h5_write" --sum 256 || exit 1
for _ in $(seq "$REPS"); do
  for m in FD_H5_DIRECT=on FD_H5_DIRECT=off FD_H5_CHECKSUM=off; do
    echo "$m $(env "$m" "$tmp/h5_write" "$tmp/f.h5" "$N" "$THREADS") s"
    rm -f "$tmp/f.h5"
  done
done
