#!/usr/bin/env bash
# Nsight Compute on the Spearman kernel: one launch of the counting pass
# (histogram on) and one with --no-histogram (-o) on a 400,000 x 30
# zero-inflated count matrix, --pvalue 1e-12: duration, issue slots, the
# busiest pipe, warp states, how busy the shared-memory unit is, and the
# shared-memory atomics of the histogram with their bank conflicts, and
# (a second run of the counting launch) what the warps wait on, in warps
# per issued instruction by reason.  Summary to stdout, full reports in
# DIR.  Results: bench/results/spearman-gpu-ncu.txt.
#
#   bench/gpu-spearman-ncu.sh [--bin PATH] [--out DIR]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; OUT=${TMPDIR:-/tmp}/fd-ncu-spearman
bench_options 2,9 "--bin=BIN --out=OUT" "$@"
mkdir -p "$OUT"
"$BIN" gen counts --rows 400000 --cols 30 --groups 50 --seed 1 -o "$OUT/m.npy"
M=smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,smsp__sass_inst_executed_op_shared_atom.sum
# Template arguments in the mangled names: Lb1E... is the histogram on.
for k in "Lb1E count-only --count-only --pvalue 1e-12" "Lb0E nohist --pvalue 1e-12 --no-histogram -o $OUT/o --force"; do
  set -- $k; re=$1; name=$2; shift 2
  timeout 300 ncu --clock-control none --kernel-name-base mangled -k "regex:_Z7k_pairsILi32E$re" --launch-skip 3 \
    --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis --metrics "$M" \
    "$BIN" spearman "$OUT/m.npy" "$@" --backend cuda -q > "$OUT/ncu-$name.txt" 2>&1
  echo "### $name pass ($*)"
  grep -E "k_pairs|Duration|Issue Slots Busy|Executed Ipc Active|highest-utilized|No Eligible|Achieved Occupancy|Mem Busy|Warp Cycles Per Issued|stalled waiting|inst_executed.sum|bank_conflicts|wavefronts|shared_atom" \
    "$OUT/ncu-$name.txt" | sed 's/  */ /g'
done
# Why warps do not issue in the counting launch: each reason's warps per
# issued instruction (they add up to "Warp Cycles Per Issued Instruction").
timeout 300 ncu --clock-control none --kernel-name-base mangled -k "regex:_Z7k_pairsILi32ELb1E" --launch-skip 3 \
  --launch-count 1 --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
  "$BIN" spearman "$OUT/m.npy" --count-only --pvalue 1e-12 --backend cuda -q > "$OUT/ncu-stalls.txt" 2>&1
echo "### counting pass: warps per issued instruction, by what they wait on (largest first)"
grep -E "issue_stalled" "$OUT/ncu-stalls.txt" | awk '{print $NF, $1}' | sort -rn | head -12
