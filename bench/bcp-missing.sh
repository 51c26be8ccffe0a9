#!/usr/bin/env bash
# bcp with missing entries: `gen tensor` tensors (SHAPE:RANK in --cases)
# at 20 dB with each of --fracs of the entries missing at random, fitted
# from rank --rank with --starts 3; wall seconds of the command, sweeps,
# the median sweep, the rank found and the error on the missing entries
# against the noise's sd; TensorLy's masked CP-ALS at the true rank beside
# it where TensorLy is installed (seconds and the same error); --backend
# cuda puts the fit's sums on the GPU (bcp_masked_gpu.cu).  Appends to
# bench/results/bcp-missing.csv.
#
#   bench/bcp-missing.sh [--cases "30x25x20:3 100x100x100:5"] [--fracs "0.3 0.7"] [--rank 8] [--threads T] [--backend cpu|cuda] [--bin PATH] [--csv FILE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=$here/../build/fcbo-dist; CSV=$here/results/bcp-missing.csv
CASES="30x25x20:3 100x100x100:5"; FRACS="0.3 0.7"; RANK=8; THREADS=$(nproc); BACKEND=cpu
source "$here/lib.sh"
bench_options 2,11 "--cases=CASES --fracs=FRACS --rank=RANK --threads=THREADS --backend=BACKEND --bin=BIN --csv=CSV" "$@"
gpu_machine
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fcbo-bcpm.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
version=$("$BIN" version | head -1 | cut -d' ' -f2-)
[ -f "$CSV" ] || echo "shape,true_rank,missing,threads,seconds,sweeps,median_sweep_s,rank,heldout_rmse,noise_sd,tensorly_seconds,tensorly_heldout_rmse,machine,date,version,backend" > "$CSV"
for c in $CASES; do
  shape=${c%%:*}; r=${c##*:}
  "$BIN" gen tensor --shape "$shape" --rank "$r" --snr 20 --seed 3 -o "$tmp/t.h5" > /dev/null
  for f in $FRACS; do
    python3 -c "import h5py, numpy as np, sys
x = h5py.File(sys.argv[1])['tensor'][:]; m = np.random.default_rng(1).random(x.shape) < float(sys.argv[2])
y = x.copy(); y[m] = np.nan; np.save(sys.argv[3], y); np.save(sys.argv[4], m)" "$tmp/t.h5" "$f" "$tmp/y.npy" "$tmp/m.npy"
    s=$(date +%s.%N)
    "$BIN" bcp "$tmp/y.npy" --missing --rank "$RANK" --starts 3 --completed -t "$THREADS" --backend "$BACKEND" -o "$tmp/o" --force -q
    secs=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    row=$(python3 - "$tmp/t.h5" "$tmp/m.npy" "$tmp/o/bcp.h5" "$r" <<'PY'
import sys, time
import h5py
import numpy as np
t, m, o, r = h5py.File(sys.argv[1]), np.load(sys.argv[2]), h5py.File(sys.argv[3]), int(sys.argv[4])
x = t["tensor"][:]
A = [t["factors/A%d" % (n + 1)][:] for n in range(x.ndim)]
letters = "ijkl"[:x.ndim]
truth = np.einsum(",".join(l + "r" for l in letters) + "->" + letters, *A)
held = np.sqrt(((o["completed"][:] - x)[m] ** 2).mean())
sw = np.median(o["trace/seconds"][:])
tl_s = tl_e = ""
try:
    import tensorly as tl
    from tensorly.decomposition import parafac
    t0 = time.time()
    cp = parafac(tl.tensor(np.where(m, 0, x)), r, mask=tl.tensor((~m).astype(float)), n_iter_max=500, init="random",
                 random_state=1, tol=1e-8)
    tl_s = "%.3f" % (time.time() - t0)
    tl_e = "%.4f" % np.sqrt(((tl.cp_to_tensor(cp) - x)[m] ** 2).mean())
except ImportError:
    pass
print("%d,%.4f,%d,%.4f,%.4f,%s,%s" % (o.attrs["iterations"], sw, o.attrs["rank"], held, (x - truth).std(), tl_s, tl_e))
PY
)
    echo "$shape,$r,$f,$THREADS,$secs,$row,\"$MACHINE\",$(date -u +%F),\"$version\",$BACKEND" | tee -a "$CSV"
  done
done
