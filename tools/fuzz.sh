#!/usr/bin/env bash
# Fuzzes the parsers: builds tests/fuzz's libFuzzer targets with clang
# (ASan and UBSan, every finding fatal) into build-fuzz/, then runs each
# for SECONDS (default 60) from its seed corpus, tests/fuzz/corpus/TARGET
# (read only; what libFuzzer adds goes to build-fuzz/corpus/TARGET).  A
# finding stops the run, exit 1, its input in build-fuzz/findings/;
# reproduce with build-fuzz/tests/fuzz/fuzz_TARGET FILE, fix it, and add
# the file to the seed corpus.  Prints each target's executions;
# --record appends them to bench/results/fuzz.csv.
#
#   tools/fuzz.sh [--seconds 60] [--targets "context matrix tensor options"] [--record]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=60; TARGETS="context matrix tensor options"; RECORD=0
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) SECONDS_EACH=$2; shift 2;; --targets) TARGETS=$2; shift 2;; --record) RECORD=1; shift;;
    -h|--help) sed -n '2,11p' "$0"; exit 0;;
    *) echo "tools/fuzz.sh: unknown option $1" >&2; exit 2;;
  esac
done
command -v clang > /dev/null || { echo "tools/fuzz.sh: needs clang (apt-get install clang)" >&2; exit 2; }
B=build-fuzz
mkdir -p $B
CC=clang CXX=clang++ cmake -S . -B $B -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFD_FUZZ=ON -DFD_WITH_CUDA=OFF -DFD_BLAS=OFF \
  -DBUILD_TESTING=OFF > $B/build.log 2>&1 || { cat $B/build.log; exit 1; }
cmake --build $B -j"$(nproc)" $(for t in $TARGETS; do echo --target fuzz_$t; done) >> $B/build.log 2>&1 ||
  { tail -40 $B/build.log; exit 1; }
mkdir -p $B/findings
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
for t in $TARGETS; do
  mkdir -p $B/corpus/$t
  log=$B/fuzz_$t.log
  # -rss_limit_mb: a reader must refuse a header that promises more than
  # the file holds, not try to allocate it.
  if $B/tests/fuzz/fuzz_$t -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
       -artifact_prefix=$B/findings/$t- $B/corpus/$t tests/fuzz/corpus/$t > "$log" 2>&1; then
    found=0
  else
    found=1; status=1
    grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$log" | head -8
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  echo "fuzz_$t: ${runs:-?} executions in ${SECONDS_EACH} s, $([ $found = 1 ] && echo "a FINDING (see $log)" || echo "no findings")"
  if [ $RECORD = 1 ]; then
    csv=bench/results/fuzz.csv
    [ -f $csv ] || echo "target,seconds,executions,findings,machine,date,commit" > $csv
    echo "$t,$SECONDS_EACH,${runs:-0},$found,\"$(nproc) cores $(lscpu | sed -n 's/^Model name: *//p' | head -1)\",$(date -u +%F),$(git rev-parse --short HEAD)" >> $csv
  fi
done
exit $status
