#!/usr/bin/env bash
# bcp on the GPU: milliseconds per sweep of `fcbo-dist bcp --backend cuda`
# (--stats: the sweeps' wall time, host part included, the start left
# out) on float32 .npy tensors of --shapes (bench/bcp_big_tensor.py: rank
# 5, 20 dB) at --ranks, 20 sweeps from random factors with --tol 0 (the
# median sweep, and the means of its parts), on 1
# GPU and, where the machine has two, 2 ranks; side by side in the same
# call the torch peer (bench/bcp_torch_peer.py: CP-ALS in float32,
# unfolding times Khatri-Rao; first shape only) and the CPU backend on
# every core at the first shape.  --ab "VAR=A VAR=B": the one-GPU runs
# once under each setting, alternating run by run (backend "cuda VAR=A"),
# an A/B of a knob on the same machine.  Appends to
# bench/results/bcp-gpu.csv.
#
#   bench/gpu-bcp.sh [--shapes "100x100x100x100 200x200x200x200"] [--ranks "16 32"] [--ab "VAR=A VAR=B"]
#                    [--bin PATH] [--csv FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
BIN=$here/../build/fcbo-dist; SHAPES="100x100x100x100 200x200x200x200"; RANKS="16 32"; AB=""
CSV=$here/results/bcp-gpu.csv
gpu_machine
bench_options 2,15 "--shapes=SHAPES --ranks=RANKS --ab=AB --bin=BIN --csv=CSV" "$@"
for s in $AB; do [[ $s == FD_*=* ]] || { echo "bench/gpu-bcp.sh: --ab takes VAR=VALUE settings, not '$s'" >&2; exit 2; }; done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2)
[ -f "$CSV" ] || echo "tool,shape,rank,backend,ranks,ms_per_sweep,products_ms,sums_ms,host_ms,fit,machine,date,version" > "$CSV"
row() { echo "$1,\"$MACHINE\",$(date -u +%F),$version" | tee -a "$CSV"; }
one() {  # shape R backend np [VAR=VALUE]
  local launch=(env ${5:-})
  [ "$4" -gt 1 ] && launch=(mpirun -np "$4" --bind-to none)
  "${launch[@]}" "$BIN" bcp "$tmp/t.npy" --rank "$2" --max-iter 20 --tol 0 --init random --backend "$3" --stats \
    -o "$tmp/o" --force 2> "$tmp/err" < /dev/null || { echo "failed: $3 np=$4 ${5:-}: $(tail -2 "$tmp/err")" >&2; return; }
  local ms parts fit
  ms=$(sed -n 's/.*(\([0-9.]*\) ms a sweep, median.*/\1/p' "$tmp/err")
  parts=$(sed -n 's/.*products \([0-9.]*\) ms, sums over ranks \([0-9.]*\) ms, the rest on the host \([0-9.]*\) ms.*/\1,\2,\3/p' "$tmp/err")
  fit=$(sed -n 's/.*: fit \([0-9.]*\) after.*/\1/p' "$tmp/err")
  row "fcbo-dist,$1,$2,$3${5:+ $5},$4,$ms,$parts,$fit"
}
first=1
for shape in $SHAPES; do
  python3 "$here/bcp_big_tensor.py" "$tmp/t.npy" "$shape" 1 || exit 1
  for R in $RANKS; do
    if [ -n "$AB" ]; then
      for rep in 1 2 3; do for s in $AB; do one "$shape" "$R" cuda 1 "$s"; done; done
    else
      one "$shape" "$R" cuda 1
    fi
    [ "${NGPU:-0}" -ge 2 ] && one "$shape" "$R" cuda 2
    [ $first = 1 ] && one "$shape" "$R" cpu 1
    if [ $first = 1 ] && python3 -c "import torch" 2> /dev/null; then
      t=$(python3 "$here/bcp_torch_peer.py" "$tmp/t.npy" "$R" 2> "$tmp/terr") && row "torch-cp-als-fp32,$shape,$R,torch-cuda,1,$t,,,," ||
        echo "torch peer failed: $(tail -2 "$tmp/terr")" >&2
    fi
  done
  first=0
done
