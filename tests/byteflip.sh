# Result files that were edited, damaged or cut short: `info` and `info
# --text` read every byte-flipped copy of a result of each workload (and
# of a master with its parts) and either read it or refuse it with a
# message and exit status 2: no crash, no hang (tests/byteflip.py).
# Under tools/sanitize.sh the same sweep runs under ASan and UBSan.
source "$(dirname "$0")/lib.sh" "$@"
W=$WORK
# 60 copies of each result; 20 under the sanitizers (each run of the
# binary starts their runtime: the sweep took 207 s under ThreadSanitizer).
FLIPS=${FD_BYTEFLIPS:-60}
if [ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ] && [ -z "${FD_BYTEFLIPS:-}" ]; then FLIPS=20; fi
"$BIN" gen context --objects 300 --attributes 30 --density 0.3 --seed 3 -o "$W/c.cxt"
"$BIN" lattice "$W/c.cxt" -o "$W/lat" --extents -q
"$BIN" gen counts --rows 300 --cols 12 --seed 3 -o "$W/m.txt"
"$BIN" spearman "$W/m.txt" -o "$W/sp" --pvalue 0.01 -q
"$BIN" gen blobs --n 500 --dims 2 --clusters 3 --seed 3 -o "$W/p.txt"
"$BIN" dpc "$W/p.txt" --labels "$W/p.labels.txt" --centers 3 --halo -o "$W/dpc" -q
"$BIN" gen tensor --shape 12x10x8 --rank 2 --seed 3 -o "$W/t.h5"
"$BIN" bcp "$W/t.h5:/tensor" --rank 4 -o "$W/bcp" -q
"$BIN" bcp "$W/t.h5:/tensor" --rank 2 --fuse 2x1x1 -o "$W/bcpf" -q
sets="lat/lattice.h5 sp/spearman.h5 dpc/dpc.h5 bcp/bcp.h5 bcpf/bcp.h5"
if command -v mpirun > /dev/null; then
  mpirun -np 2 "$BIN" lattice "$W/c.cxt" -o "$W/latm" --extents -q && sets="$sets latm/lattice.h5"
  mpirun -np 2 "$BIN" spearman "$W/m.txt" -o "$W/spm" --pvalue 0.01 -q && sets="$sets spm/spearman.h5"
fi
seed=1
for s in $sets; do
  "$BIN" info --text "$W/$s" > /dev/null; rc=$?
  check '[ $rc -eq 0 ]' "$s: the undamaged result does not read: exit $rc"
  python3 "$(dirname "$0")/byteflip.py" "$BIN" "$W/$s" "$FLIPS" "$seed" "$W/flips-${s%%/*}" && ok || bad "$s: byte flips"
  seed=$((seed + 1))
done
# Cut short: every length of the first 4 KiB, then every 64th byte.
for s in lat/lattice.h5 dpc/dpc.h5 bcp/bcp.h5; do
  size=$(stat -c %s "$W/$s"); fails=0
  for len in $(seq 0 97 4096) $(seq 4096 4099 "$size"); do
    [ "$len" -lt "$size" ] || continue
    head -c "$len" "$W/$s" > "$W/cut.h5"
    timeout 60 "$BIN" info --text "$W/cut.h5" > /dev/null 2> "$W/err"; rc=$?
    [ $rc -eq 2 ] || { fails=$((fails + 1)); echo "FAIL: $s cut at $len: exit $rc: $(tail -1 "$W/err")"; }
  done
  check '[ $fails -eq 0 ]' "$s: $fails truncated copies were not refused with exit status 2"
done
finish
