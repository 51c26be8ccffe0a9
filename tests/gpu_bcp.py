"""The CUDA bcp backend against the CPU backend: order-3 and order-4
synthetic tensors (gen tensor, rank 5 at 20 dB, started at 15), a tensor
whose modes make both of the MTTKRP's orientations run (L <= K and
L > K), and the shared amino tensor; after 200 sweeps with --tol 0 the
rank is the same and the factors agree to 1e-10 (components matched,
signs aligned); on 2 GPUs (2 ranks, a process grid) as well, with the
sums between the GPUs by NCCL and, with FD_NCCL=off, through the host;
--nonneg on the order-3 tensor (factors to 1e-8); --fuse
2x2x2x2 with the sub-tensors fitted on the GPU fuses to the CPU's
factors (1e-8).
usage: gpu_bcp.py FCBO_DIST WORKDIR GPU_BACKEND GPUS SHARED"""
import os
import subprocess
import sys

import h5py
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


specs = []
for shape, seed in (("20x30x25", 3), ("15x20x12x18", 7), ("6x50x8x40", 11)):
    path = os.path.join(WORK, "t%s.h5" % shape)
    subprocess.run([BIN, "gen", "tensor", "--shape", shape, "--rank", "5", "--seed", str(seed), "-o", path], env=ENV,
                   check=True)
    specs.append((shape, path + ":/tensor", 15))
amino = os.path.join(SHARED, "data", "tensor", "amino.h5")
if os.path.exists(amino):
    specs.append(("amino", amino + ":/X", 10))
for name, spec, R in specs:
    cpu, gpu = os.path.join(WORK, "cpu"), os.path.join(WORK, "gpu")
    run([spec, "--rank", str(R), "-o", cpu], "cpu")
    run([spec, "--rank", str(R), "-o", gpu], GB)
    (a, ra), (b, rb) = load(cpu), load(gpu)
    check(ra == rb, "%s: rank %d on the CPU, %d on the GPU" % (name, ra, rb))
    d = factor_diff(a, b)
    check(d <= 1e-10, "%s: the GPU's factors differ by %g" % (name, d))
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
finish()
