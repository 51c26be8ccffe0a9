#!/usr/bin/env bash
# compute-sanitizer over the CUDA spearman backend on a small zero-inflated
# matrix (700 x 30, constant and equal rows; --cols N for rows of N values,
# another instance of the kernel): memcheck, racecheck, synccheck and
# initcheck, for --pvalue (pairs written), --fdr (its own
# kernel bins x in pass 1: shared window, staged keeps, queues) and
# --top-k (per-row thresholds), with each screen of the kernel's common
# path (FD_GPU_SCREEN; --top-k and --fdr's pass 1 ignore it).  fdr-loose
# (--fdr 0.5, not in the default --sels) keeps half the pairs, so that
# pass 1's lanes stage more keeps of a half than they hold and the closer
# look bins them.  A non-zero status from a tool is a finding.
# Results: bench/results/spearman-gpu-sanitizer.txt.
#
#   bench/gpu-spearman-sanitizer.sh [--bin PATH] [--out DIR] [--cols N] [--sels "pvalue fdr topk" (or fdr-loose)]
#   (full reports in DIR)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; OUT=${TMPDIR:-/tmp}/fd-sanitizer-spearman; SELS="pvalue fdr topk"; COLS=30
bench_options 2,16 "--bin=BIN --out=OUT --sels=SELS --cols=COLS" "$@"
args=()
for s in $SELS; do
  case $s in pvalue) args+=("--pvalue 0.01");; fdr) args+=("--fdr 0.05");; topk) args+=("--top-k 5");;
    fdr-loose) args+=("--fdr 0.5");;
    *) echo "bench/gpu-spearman-sanitizer.sh: unknown selection $s (pvalue, fdr, fdr-loose, topk)" >&2; exit 2;; esac
done
[[ $COLS =~ ^[0-9]+$ && $COLS -ge 2 ]] || { echo "bench/gpu-spearman-sanitizer.sh: --cols wants a count of at least 2, got '$COLS'" >&2; exit 2; }
mkdir -p "$OUT"
"$BIN" gen counts --rows 700 --cols "$COLS" --seed 3 -o "$OUT/m.txt" > /dev/null ||
  { echo "bench/gpu-spearman-sanitizer.sh: gen counts failed" >&2; exit 2; }
worst=0
for tool in memcheck racecheck synccheck initcheck; do
  for screen in band max; do
    for sel in "${args[@]}"; do
      [ "$screen" = band ] && [ "$sel" = "--top-k 5" ] && continue # top-k ignores FD_GPU_SCREEN
      f="$OUT/sanitizer-$tool-$screen-$(echo "$sel" | tr -d ' -').txt"
      FD_GPU_SCREEN=$screen timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 "$BIN" spearman "$OUT/m.txt" \
        --backend cuda -q $sel -o "$OUT/o" --force > "$f" 2>&1
      rc=$?; [ $rc -gt $worst ] && worst=$rc
      echo "$tool FD_GPU_SCREEN=$screen $sel$([ "$COLS" = 30 ] || echo " (700 x $COLS)") rc=$rc  $(tail -1 "$f")"
    done
  done
done
exit $worst
