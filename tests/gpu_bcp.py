"""The CUDA bcp backend against the CPU backend: order-3 and order-4
synthetic tensors (gen tensor, rank 5 at 20 dB, started at 15, the first
from 40 as well: the covariance kernel at ranks above 16), a tensor
whose modes make both of the MTTKRP's orientations run (L <= K and
L > K), and the shared amino tensor; after 200 sweeps with --tol 0 the
rank is the same and the factors agree to 1e-10 (components matched,
signs aligned), with a sweep's R x R steps on the device and on the
host (FD_BCP_GPU_SWEEP=device and host); on 2 GPUs (2 ranks, a process grid) as well, with the
sums between the GPUs by NCCL and, with FD_NCCL=off, through the host;
--nonneg on the order-3 tensor (factors to 1e-8); --fuse
2x2x2x2 with the sub-tensors fitted on the GPU fuses to the CPU's
factors (1e-8).  With missing entries (NaN, --missing; 30% and 70% of
an order-3 and an order-4 tensor whose modes take both of the masked
sums' orientations): the GPU's sums (bcp_masked_gpu.cu) give the CPU's
rank, fit and lower bound (1e-9 relative) and factors (1e-8) after 200
sweeps; 2 GPUs give one GPU's factors (1e-12); --fuse 2x2x2 with
missing entries, the sub-tensors' sums on the GPU, the CPU's fused
factors (1e-8).
usage: gpu_bcp.py FCBO_DIST WORKDIR GPU_BACKEND GPUS SHARED"""
import os
import subprocess
import sys

import h5py
import numpy as np
from bcp_testlib import factor_diff
from testlib import ENV, check, finish

BIN, WORK, GB, GPUS, SHARED = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]


def run(args, backend, np_=1, env=None):
    cmd = [BIN, "bcp"] + args + ["--backend", backend, "--force", "-q", "--tol", "0", "--max-iter", "200"]
    if np_ > 1:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np_)] + (["-x", "FD_NCCL"] if env else []) + cmd
    r = subprocess.run(cmd, env=dict(ENV, **(env or {})), capture_output=True, text=True, stdin=subprocess.DEVNULL)
    check(r.returncode == 0, "%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))


def load(d):
    with h5py.File(os.path.join(d, "bcp.h5"), "r") as f:
        return [f["factors/A%d" % (k + 1)][:] for k in range(int(f.attrs["order"]))], int(f.attrs["rank"])


def fit_and_bound(d):
    with h5py.File(os.path.join(d, "bcp.h5"), "r") as f:
        return float(f.attrs["fit"]), float(f.attrs["lower_bound"])


specs = []
for shape, seed in (("20x30x25", 3), ("15x20x12x18", 7), ("6x50x8x40", 11)):
    path = os.path.join(WORK, "t%s.h5" % shape)
    subprocess.run([BIN, "gen", "tensor", "--shape", shape, "--rank", "5", "--seed", str(seed), "-o", path], env=ENV,
                   check=True)
    specs.append((shape, path + ":/tensor", 15))
# Started above BCP_GPU_SWEEP_RMAX's old 16: the sweep's covariance kernel
# at R = 40 and at every rank the pruning passes through.
specs.append(("20x30x25 from rank 40", specs[0][1], 40))
amino = os.path.join(SHARED, "data", "tensor", "amino.h5")
if os.path.exists(amino):
    specs.append(("amino", amino + ":/X", 10))
for name, spec, R in specs:
    cpu, gpu = os.path.join(WORK, "cpu"), os.path.join(WORK, "gpu")
    run([spec, "--rank", str(R), "-o", cpu], "cpu")
    run([spec, "--rank", str(R), "-o", gpu], GB, env={"FD_BCP_GPU_SWEEP": "device"})
    (a, ra), (b, rb) = load(cpu), load(gpu)
    check(ra == rb, "%s: rank %d on the CPU, %d on the GPU" % (name, ra, rb))
    d = factor_diff(a, b)
    check(d <= 1e-10, "%s: the GPU's factors differ by %g" % (name, d))
    # The sweep's R x R steps on the host, a wait a mode: the same factors.
    gh = os.path.join(WORK, "gpuh")
    run([spec, "--rank", str(R), "-o", gh], GB, env={"FD_BCP_GPU_SWEEP": "host"})
    c, rc = load(gh)
    d = factor_diff(a, c)
    check(rc == ra and d <= 1e-10, "%s: FD_BCP_GPU_SWEEP=host: rank %d, factors differ by %g" % (name, rc, d))
    if GPUS >= 2:
        for how, env in (("NCCL", None), ("FD_NCCL=off", {"FD_NCCL": "off"})):
            g2 = os.path.join(WORK, "gpu2")
            run([spec, "--rank", str(R), "-o", g2], GB, np_=2, env=env)
            c, rc = load(g2)
            d = factor_diff(a, c)
            check(rc == ra and d <= 1e-10, "%s: 2 GPUs (%s): rank %d, factors differ by %g" % (name, how, rc, d))
# --nonneg: the projection on the device.
spec = specs[0][1]
for backend, out in (("cpu", "ncpu"), (GB, "ngpu")):
    run([spec, "--rank", "15", "--nonneg", "-o", os.path.join(WORK, out)], backend)
(a, ra), (b, rb) = load(os.path.join(WORK, "ncpu")), load(os.path.join(WORK, "ngpu"))
d = factor_diff(a, b)
check(ra == rb and min(x.min() for x in b) >= 0 and d <= 1e-8,
      "--nonneg: ranks %d and %d, smallest GPU entry %g, factors differ by %g" % (ra, rb, min(x.min() for x in b), d))
# --fuse: each sub-tensor fitted on the GPU (rank 5 from 15, 4 starts,
# 200 sweeps each), the fusion on the host: the fused factors as the
# CPU's.
t4 = specs[1][1]
for backend, out in (("cpu", "fcpu"), (GB, "fgpu")):
    run([t4, "--rank", "5", "--fuse", "2x2x2x2", "-o", os.path.join(WORK, out)], backend)
(a, ra), (b, rb) = load(os.path.join(WORK, "fcpu")), load(os.path.join(WORK, "fgpu"))
d = factor_diff(a, b)
check(ra == rb == 5 and d <= 1e-8, "--fuse 2x2x2x2: ranks %d and %d, the GPU's fused factors differ by %g" % (ra, rb, d))
# Missing entries: the masked fit's sums on the GPU.
rng = np.random.default_rng(5)
for shape, seed in (("30x25x20", 13), ("12x40x9x30", 17)):
    path = os.path.join(WORK, "m%s.h5" % shape)
    subprocess.run([BIN, "gen", "tensor", "--shape", shape, "--rank", "3", "--seed", str(seed), "-o", path], env=ENV,
                   check=True)
    with h5py.File(path, "r") as f:
        x = f["tensor"][:]
    for frac in (0.3, 0.7):
        name = "%s, %d%% missing" % (shape, round(100 * frac))
        y = x.copy()
        y[rng.random(x.shape) < frac] = np.nan
        npy = os.path.join(WORK, "m.npy")
        np.save(npy, y)
        args = [npy, "--missing", "--rank", "8", "--starts", "1"]
        cpu, gpu = os.path.join(WORK, "mcpu"), os.path.join(WORK, "mgpu")
        run(args + ["-o", cpu], "cpu")
        run(args + ["-o", gpu], GB)
        (a, ra), (b, rb) = load(cpu), load(gpu)
        (fa, la), (fb, lb) = fit_and_bound(cpu), fit_and_bound(gpu)
        d = factor_diff(a, b)
        check(ra == rb, "%s: rank %d on the CPU, %d on the GPU" % (name, ra, rb))
        check(abs(fa - fb) <= 1e-9 * abs(fa) and abs(la - lb) <= 1e-9 * abs(la),
              "%s: fit %.12g and bound %.12g on the CPU, %.12g and %.12g on the GPU" % (name, fa, la, fb, lb))
        check(d <= 1e-8, "%s: the GPU's factors differ by %g" % (name, d))
        if GPUS >= 2:
            g2 = os.path.join(WORK, "mgpu2")
            run(args + ["-o", g2], GB, np_=2)
            c, rc = load(g2)
            d = factor_diff(b, c)
            check(rc == rb and d <= 1e-12, "%s: 2 GPUs: rank %d, factors differ from 1 GPU's by %g" % (name, rc, d))
# --fuse with missing entries: each sub-tensor's sums on the GPU.
with h5py.File(os.path.join(WORK, "m30x25x20.h5"), "r") as f:
    y = f["tensor"][:]
y[rng.random(y.shape) < 0.3] = np.nan
npy = os.path.join(WORK, "mf.npy")
np.save(npy, y)
for backend, out in (("cpu", "mfcpu"), (GB, "mfgpu")):
    run([npy, "--missing", "--rank", "3", "--fuse", "2x2x2", "-o", os.path.join(WORK, out)], backend)
(a, ra), (b, rb) = load(os.path.join(WORK, "mfcpu")), load(os.path.join(WORK, "mfgpu"))
d = factor_diff(a, b)
check(ra == rb == 3 and d <= 1e-8, "--fuse 2x2x2 with missing entries: ranks %d and %d, factors differ by %g" % (ra, rb, d))
finish()
